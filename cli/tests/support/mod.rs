//! Helpers shared by the command-line tests.
#![allow(dead_code, unused_imports)] // each test binary uses its own subset

pub mod cli;

/// True when the environment demands a GPU adapter (CI sets `HULLSAT_REQUIRE_GPU=1`).
pub fn gpu_required() -> bool {
    std::env::var("HULLSAT_REQUIRE_GPU").is_ok_and(|v| v == "1")
}
