//! One `calibrate` run per device at a time: two runs measuring at once share the cores and
//! the memory system, and both files would be wrong. A run holds an advisory lock (`flock`)
//! on `.<device-slug>.lock` in the folder its calibration goes to; a second run fails at
//! once and names the holder's PID. The lock goes with the process, however it ends; the
//! file is removed when the run ends or is interrupted (with a folder made for it, when the
//! run ends), and a file a killed run left is simply locked again.

use std::fs::File;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::backend::DeviceInfo;

/// Why the device's lock could not be taken.
#[derive(Debug, Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("another calibrate run (pid {}) holds the lock on {device}: {}", pid_text(*.pid), .path.display())]
    Held {
        /// The holder's PID, where its file says it.
        pid: Option<u32>,
        /// The device's name.
        device: String,
        /// The lock file.
        path: PathBuf,
    },
    /// The lock file could not be opened or locked.
    #[error("cannot lock {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

fn pid_text(pid: Option<u32>) -> String {
    pid.map_or("unknown".into(), |p| p.to_string())
}

/// The device's calibration lock, held until dropped (or the process ends).
#[derive(Debug)]
pub struct DeviceLock {
    // Closing the file releases the lock.
    _file: File,
    path: PathBuf,
    created: Vec<PathBuf>,
}

impl Drop for DeviceLock {
    fn drop(&mut self) {
        // Removed while still locked: a run that opens the file after this finds it gone
        // from the folder once it has the lock, and takes a new one (see `lock_device`).
        crate::export::keep_on_interrupt(&self.path);
        let _ = std::fs::remove_file(&self.path);
        crate::export::remove_empty_folders(&self.created);
    }
}

impl DeviceLock {
    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The lock file of `device` in `dir`: `<dir>/.<slug>.lock`.
pub fn lock_path(dir: &Path, device: &DeviceInfo) -> PathBuf {
    dir.join(format!(".{}.lock", device.slug()))
}

/// Take `device`'s calibration lock in `dir` (created if missing) without waiting: a lock
/// another process holds is [`LockError::Held`]. The file then holds this process's PID.
pub fn lock_device(dir: &Path, device: &DeviceInfo) -> Result<DeviceLock, LockError> {
    let path = lock_path(dir, device);
    let io = |source| LockError::Io {
        path: path.clone(),
        source,
    };
    let created = crate::export::create_folders(dir).map_err(io)?;
    let result = (|| loop {
        // Not truncated on open: the holder's PID must survive a second run's attempt.
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        if !try_lock(&file)? {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut file, &mut text);
            return Ok(Err(text.trim().parse().ok()));
        }
        // The holder before us may have removed the file between our open and our lock:
        // then this lock is on a file no one else will find; open the path again.
        if !same_file(&file, &path) {
            continue;
        }
        use std::io::Write;
        file.set_len(0)?;
        write!(file, "{}", std::process::id())?;
        // An interrupted run removes it with its temporaries (still locked, as here).
        crate::export::remove_on_interrupt(&path);
        return Ok(Ok(file));
    })();
    match result {
        Ok(Ok(file)) => Ok(DeviceLock {
            _file: file,
            path,
            created,
        }),
        Ok(Err(pid)) => Err(LockError::Held {
            pid,
            device: device.name.clone(),
            path,
        }),
        Err(source) => {
            crate::export::remove_empty_folders(&created);
            Err(io(source))
        }
    }
}

/// Whether the open `file` is the file at `path` now.
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

/// `flock(LOCK_EX | LOCK_NB)`: `Ok(false)` where another open file holds it.
#[cfg(unix)]
fn try_lock(file: &File) -> std::io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    loop {
        // SAFETY: the descriptor is open for the call's duration; flock touches no memory.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(true);
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => return Ok(false),
            _ => return Err(e),
        }
    }
}

/// No advisory locks here: every run proceeds.
#[cfg(not(unix))]
fn try_lock(_file: &File) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device() -> DeviceInfo {
        crate::calibration::test_fixture().device
    }

    #[test]
    fn a_second_lock_on_the_device_is_refused_with_the_holders_pid() {
        let dir = tempfile::tempdir().expect("temp dir");
        let held = lock_device(dir.path(), &device()).expect("first lock");
        // flock conflicts between open files, even within one process.
        let err = lock_device(dir.path(), &device()).expect_err("held");
        let line = err.to_string();
        assert_eq!(
            line,
            format!(
                "another calibrate run (pid {}) holds the lock on {}: {}",
                std::process::id(),
                device().name,
                held.path().display()
            )
        );
        drop(held);
        let again = lock_device(dir.path(), &device()).expect("free again");
        assert!(again.path().exists());
        drop(again);
        assert!(
            !lock_path(dir.path(), &device()).exists(),
            "removed at the end"
        );
    }

    #[test]
    fn a_folder_made_for_the_lock_is_removed_with_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let folder = dir.path().join("calibrations");
        let held = lock_device(&folder, &device()).expect("lock");
        assert!(folder.is_dir());
        drop(held);
        assert!(!folder.exists());
    }

    #[test]
    fn another_device_has_its_own_lock() {
        let dir = tempfile::tempdir().expect("temp dir");
        let _held = lock_device(dir.path(), &device()).expect("first lock");
        let mut other = device();
        other.name.push_str(" two");
        lock_device(dir.path(), &other).expect("another device");
    }
}
