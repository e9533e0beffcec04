//! Where the results of `collide` go, and the lines hullsat prints on stderr.
//!
//! 1. Check every result finite ([`write_results_json`] does so before its first byte); a pair
//!    without a finite result is [`CliError::NotComputed`], naming it, and nothing is written.
//! 2. Stream the JSON through a buffer to stdout, or to `--out`:
//!    - a regular file (or a new path) is written to a temporary file beside it, flushed to disk
//!      and renamed over the target only when complete; on any failure the temporary file is
//!      removed and the target is left as it was (a symbolic link is followed, so the link
//!      stays and the file it points to is replaced);
//!    - anything else that exists (a device such as `/dev/stdout`, a named pipe) is written in
//!      place, never removed or replaced.
//! 3. A failed write (a full disk, a closed pipe) is [`CliError::Write`], one line, exit 1.
//!
//! The reports of `demo` and `bench` go to stdout through [`print_lines`], with the same
//! handling of failed writes.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use hullsat::Manifold;
use hullsat::scene::json::{WriteResultsError, one_line, write_results_json};

use super::CliError;

/// Size of the output buffer, bytes.
const BUFFER_BYTES: usize = 1 << 16;

/// Writes the results of `pairs` to `out` (stdout when `None`). `listed` says whether the
/// pairs are the scene's own list (a failing pair is named `pairs[i]`) or the broadphase's.
pub(super) fn write_results(
    out: Option<&Path>,
    pairs: &[[u32; 2]],
    results: &[Option<Manifold>],
    listed: bool,
) -> Result<(), CliError> {
    let write = |w: &mut dyn Write| write_results_json(w, pairs, results);
    let outcome = match out {
        None => write_stdout(write),
        Some(path) => write_file(path, write),
    };
    outcome.map_err(|(target, err)| match err {
        WriteResultsError::NonFinite { index, pair, field } => CliError::NotComputed(if listed {
            format!("pairs[{index}] ([{}, {}]): {field}", pair[0], pair[1])
        } else {
            format!("broadphase pair [{}, {}]: {field}", pair[0], pair[1])
        }),
        WriteResultsError::Io(source) => CliError::Write { target, source },
    })
}

/// Writes `text` to `out` (stdout when `None`) with the same care as [`write_results`]: a
/// file is replaced only once complete, a failed write is one line, exit 1 (the hits of
/// `raycast`).
pub(super) fn write_text(out: Option<&Path>, text: &str) -> Result<(), CliError> {
    let write = |w: &mut dyn Write| Ok(w.write_all(text.as_bytes())?);
    let outcome = match out {
        None => write_stdout(write),
        Some(path) => write_file(path, write),
    };
    outcome.map_err(|(target, err)| match err {
        WriteResultsError::Io(source) => CliError::Write { target, source },
        other => CliError::NotComputed(other.to_string()),
    })
}

/// Writes `lines` to stdout, each ending in a newline (the reports of `demo` and `bench`).
pub(super) fn print_lines(lines: &[String]) -> Result<(), CliError> {
    let mut out = BufWriter::new(io::stdout().lock());
    lines
        .iter()
        .try_for_each(|line| writeln!(out, "{line}"))
        .and_then(|()| out.flush())
        .map_err(|source| CliError::Write {
            target: "stdout".into(),
            source,
        })
}

/// One line on stderr, control characters escaped; a failure to print it is ignored (there is
/// nowhere left to report it).
pub(super) fn note(line: &str) {
    let _ = writeln!(io::stderr().lock(), "{}", one_line(line));
}

/// What a write failure names as its target: `stdout` or the file's name, escaped.
type Failure = (String, WriteResultsError);

fn write_stdout(write: impl FnOnce(&mut dyn Write) -> Result<(), WriteResultsError>) -> Result<(), Failure> {
    let mut out = BufWriter::with_capacity(BUFFER_BYTES, io::stdout().lock());
    write(&mut out)
        .and_then(|()| Ok(out.flush()?))
        .map_err(|err| ("stdout".to_string(), err))
}

fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<(), WriteResultsError>,
) -> Result<(), Failure> {
    let target_name = one_line(&path.display().to_string());
    let fail = |err: WriteResultsError| (target_name.clone(), err);
    // Follow a symbolic link: replace the file it points to, keep the link.
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    match std::fs::metadata(&target) {
        Ok(meta) if meta.is_dir() => Err(fail(
            io::Error::new(io::ErrorKind::IsADirectory, "it is a directory").into(),
        )),
        Ok(meta) if !meta.is_file() => {
            // A device or a pipe: write in place (replacing it would destroy it).
            let file = OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(|e| fail(e.into()))?;
            let mut out = BufWriter::with_capacity(BUFFER_BYTES, file);
            write(&mut out).and_then(|()| Ok(out.flush()?)).map_err(fail)
        }
        _ => {
            let (temp_path, file) = create_temp_beside(&target).map_err(|e| fail(e.into()))?;
            let written =
                write_and_sync(file, write).and_then(|()| Ok(std::fs::rename(&temp_path, &target)?));
            if written.is_err() {
                let _ = std::fs::remove_file(&temp_path);
            }
            written.map_err(fail)
        }
    }
}

/// Writes through a buffer, flushes, and syncs the file to disk, so that a rename after it
/// never exposes a partial file.
fn write_and_sync(
    file: File,
    write: impl FnOnce(&mut dyn Write) -> Result<(), WriteResultsError>,
) -> Result<(), WriteResultsError> {
    let mut out = BufWriter::with_capacity(BUFFER_BYTES, file);
    write(&mut out)?;
    let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
    file.sync_all()?;
    Ok(())
}

/// A new file `.NAME.PID-N.tmp` in `target`'s folder, with `target`'s permissions when it
/// exists.
fn create_temp_beside(target: &Path) -> io::Result<(PathBuf, File)> {
    let folder = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path does not name a file"))?;
    let mut attempt = 0;
    loop {
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".{}-{attempt}.tmp", std::process::id()));
        let temp_path = folder.join(temp_name);
        match OpenOptions::new().write(true).create_new(true).open(&temp_path) {
            Ok(file) => {
                if let Ok(meta) = std::fs::metadata(target) {
                    file.set_permissions(meta.permissions())?;
                }
                return Ok((temp_path, file));
            }
            // Left behind by a process that was killed: try the next name.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(err) => return Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh, empty scratch folder for one test, removed with what it holds when dropped (at
    /// the test's end, passed or failed).
    struct Scratch(PathBuf);

    impl std::ops::Deref for Scratch {
        type Target = Path;

        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn scratch(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("hullsat-output-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn entries(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_file() {
        let dir = scratch("failed");
        let target = dir.join("results.json");
        std::fs::write(&target, "old results").unwrap();
        let failing = |w: &mut dyn Write| -> Result<(), WriteResultsError> {
            w.write_all(&[b'x'; 3 * BUFFER_BYTES])?;
            Err(io::Error::other("disk full").into())
        };
        let (name, err) = write_file(&target, failing).unwrap_err();
        assert_eq!(name, target.display().to_string());
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old results");
        assert_eq!(entries(&dir), ["results.json"]);
    }

    #[test]
    fn a_successful_write_replaces_the_file_and_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("success");
        let target = dir.join("results.json");
        std::fs::write(&target, "old results").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&target, |w| Ok(w.write_all(b"new results")?)).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new results");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        assert_eq!(entries(&dir), ["results.json"]);
    }

    #[test]
    fn a_symbolic_link_is_followed_and_kept() {
        let dir = scratch("link");
        let real = dir.join("real.json");
        let link = dir.join("link.json");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_file(&link, |w| Ok(w.write_all(b"new")?)).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(entries(&dir), ["link.json", "real.json"]);
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = scratch("directory");
        let (_, err) = write_file(&dir, |w| Ok(w.write_all(b"x")?)).unwrap_err();
        assert_eq!(err.to_string(), "it is a directory");
        assert!(entries(&dir).is_empty());
    }
}
