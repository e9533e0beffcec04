//! Helpers shared by the integration tests; each test binary uses a different subset.
#![allow(dead_code)]

pub mod oracle;
pub mod shapes;
