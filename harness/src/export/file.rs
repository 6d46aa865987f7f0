//! Writing files so that no reader ever sees a partial one: a temporary file in the same
//! folder, then a rename. Every file the harness writes goes through [`write_atomically`]
//! (one file) or [`write_together`] (related files, renamed into place one after another
//! only once every one of them is written).
//!
//! A temporary file is named `.NAME.PID.tmp`. While it exists its path is held in a
//! process-wide registry, so an interrupted process can remove its own
//! ([`exit_removing_temporaries`]); and the first write into a folder removes the
//! temporaries there that a process killed outright (SIGKILL, a crash) left behind: those
//! whose PID is no live process ([`sweep_stale_temporaries`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// The temporaries this process has made and not yet renamed or removed, and the folders
/// already swept. Files are created and renamed with the lock held, so an exit that holds
/// it ([`exit_removing_temporaries`]) sees no half-done create or rename.
struct Registry {
    pending: Vec<PathBuf>,
    swept: BTreeSet<PathBuf>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    pending: Vec::new(),
    swept: BTreeSet::new(),
});

fn registry() -> MutexGuard<'static, Registry> {
    // A panic while the lock was held leaves the list itself consistent.
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Write `bytes` to `path` through a temporary file in the same folder and a rename, so a
/// reader never sees a partial file and an interrupted run leaves none behind.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_together(&[(path, bytes)]).map_err(|e| e.source)
}

/// A file of a [`write_together`] unit could not be written.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {path}: {source}")]
pub struct WriteError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: std::io::Error,
}

/// Write related files as one unit: every file is first written to its temporary, then
/// all are renamed into place in the order given, with nothing else in between (an
/// interruption waits for the renames). Put the file other commands read (the JSON) last:
/// it then appears only once its companions are complete. On an error no temporary is left,
/// and no file is replaced when a temporary could not be written.
pub fn write_together(files: &[(&Path, &[u8])]) -> Result<(), WriteError> {
    let mut temporaries: Vec<PathBuf> = Vec::with_capacity(files.len());
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WriteError { path, source }
    };
    let result = (|| {
        for (path, bytes) in files {
            temporaries.push(write_temporary(path, bytes).map_err(failed(path))?);
        }
        let mut reg = registry();
        // A folder where a file should go would fail its rename after others succeeded.
        if let Some((path, _)) = files.iter().find(|(path, _)| path.is_dir()) {
            return Err(failed(path)(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "a folder is in the way",
            )));
        }
        for ((path, _), tmp) in files.iter().zip(&temporaries) {
            std::fs::rename(tmp, path).map_err(failed(path))?;
            reg.pending.retain(|p| p != tmp);
        }
        Ok(())
    })();
    if result.is_err() {
        let mut reg = registry();
        for tmp in &temporaries {
            let _ = std::fs::remove_file(tmp);
            reg.pending.retain(|p| p != tmp);
        }
    }
    result
}

/// Write `bytes` to `path`'s temporary (registered) and return the temporary's path.
fn write_temporary(path: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    use std::io::Write;
    let dir = folder_of(path);
    std::fs::create_dir_all(dir)?;
    sweep_once(dir);
    let name = path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = {
        let mut reg = registry();
        reg.pending.push(tmp.clone());
        match std::fs::File::create(&tmp) {
            Ok(f) => f,
            Err(e) => {
                reg.pending.retain(|p| p != &tmp);
                return Err(e);
            }
        }
    };
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if let Err(e) = written {
        drop(file);
        let mut reg = registry();
        let _ = std::fs::remove_file(&tmp);
        reg.pending.retain(|p| p != &tmp);
        return Err(e);
    }
    Ok(tmp)
}

/// The folder `path` is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Make sure files can be written into `dir` before minutes of measuring: create it, write
/// and remove a probe file (a temporary of this process, so it is never left behind), and
/// remove again the folders this check created, so a run that fails later leaves no trace.
pub fn check_writable(dir: &Path) -> std::io::Result<()> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let created = create_folders(dir)?;
    let probe = write_temporary(&dir.join("write-check"), b"").and_then(|probe| {
        let mut reg = registry();
        reg.pending.retain(|p| p != &probe);
        std::fs::remove_file(&probe)
    });
    remove_empty_folders(&created);
    probe
}

/// Create `dir` and its missing parents; returns the folders created, outermost first.
pub fn create_folders(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|a| !a.as_os_str().is_empty() && std::fs::symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect();
    std::fs::create_dir_all(dir)?;
    Ok(missing.into_iter().rev().collect())
}

/// Remove the folders [`create_folders`] created, innermost first, as far as they are empty.
pub fn remove_empty_folders(created: &[PathBuf]) {
    for dir in created.iter().rev() {
        if std::fs::remove_dir(dir).is_err() {
            break;
        }
    }
}

/// Have [`exit_removing_temporaries`] remove `path` too (a lock file), until
/// [`keep_on_interrupt`] takes it back.
pub fn remove_on_interrupt(path: &Path) {
    registry().pending.push(path.to_path_buf());
}

/// Take back [`remove_on_interrupt`].
pub fn keep_on_interrupt(path: &Path) {
    registry().pending.retain(|p| p != path);
}

/// Remove every temporary this process has not yet renamed and end the process with `code`,
/// holding the registry so that no write starts or completes meanwhile: an interrupted run
/// leaves the files it was writing as they were before it, and no temporary.
pub fn exit_removing_temporaries(code: i32) -> ! {
    let reg = registry();
    for tmp in &reg.pending {
        let _ = std::fs::remove_file(tmp);
    }
    // The guard is never dropped: other threads wait on it until the process ends.
    std::process::exit(code)
}

/// Sweep `dir` the first time this process writes into it.
fn sweep_once(dir: &Path) {
    let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    if registry().swept.insert(key) {
        sweep_stale_temporaries(dir);
    }
}

/// Remove the temporaries (`.NAME.PID.tmp`) in `dir` whose PID is no live process: what a
/// run killed in the middle of a write left. Returns the files removed. Temporaries of
/// live processes, this one's included, are kept. (PIDs are those of this machine's PID
/// namespace: a folder shared with another machine or container may hold temporaries of
/// processes this one cannot see, which are then taken for dead.)
pub fn sweep_stale_temporaries(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = temporary_pid(&name.to_string_lossy()) else {
            continue;
        };
        if pid != std::process::id() && !process_is_alive(pid) {
            let path = entry.path();
            if std::fs::remove_file(&path).is_ok() {
                removed.push(path);
            }
        }
    }
    removed
}

/// The PID in a temporary's name `.NAME.PID.tmp`, or `None` for any other name.
fn temporary_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (stem, pid) = inner.rsplit_once('.')?;
    if stem.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok().filter(|&p| p > 0)
}

/// Whether a process with this PID exists (signal 0 reaches it, or exists but is not ours).
fn process_is_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 performs only the existence and permission checks.
        if unsafe { libc::kill(pid, 0) } == 0 {
            return true;
        }
        std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// `stem` with `.ext` appended (unlike `Path::with_extension`, which would replace a dotted
/// part of the stem such as `x.series.sor`).
///
/// ```
/// use std::path::Path;
/// use harness::export::with_suffix;
/// assert_eq!(with_suffix(Path::new("d/x.series.sor"), "csv"), Path::new("d/x.series.sor.csv"));
/// ```
pub fn with_suffix(stem: &Path, ext: &str) -> PathBuf {
    let mut name = stem.as_os_str().to_owned();
    name.push(".");
    name.push(ext);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("lists")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_whole_files_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("sub/out.json");
        write_atomically(&path, b"{}").expect("writes");
        write_atomically(&path, b"[1]").expect("replaces");
        assert_eq!(std::fs::read(&path).expect("reads"), b"[1]");
        assert_eq!(names(&dir.path().join("sub")), ["out.json"]);
        assert!(!registry().pending.iter().any(|p| p.starts_with(dir.path())));
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        // A folder where the file should go: the rename fails.
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).expect("mkdir");
        std::fs::write(path.join("x"), b"x").expect("fills it");
        assert!(write_atomically(&path, b"data").is_err());
        assert_eq!(names(dir.path()), ["taken"], "only the folder remains");
    }

    #[test]
    fn related_files_are_replaced_all_or_none() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (csv, json) = (dir.path().join("r.csv"), dir.path().join("r.json"));
        write_together(&[(&csv, b"old"), (&json, b"old")]).expect("writes");
        // The second file's place is taken by a folder: neither file is replaced.
        let taken = dir.path().join("d");
        std::fs::create_dir(&taken).expect("mkdir");
        assert!(write_together(&[(&csv, b"new"), (&taken, b"new")]).is_err());
        assert_eq!(std::fs::read(&csv).expect("reads"), b"old");
        write_together(&[(&csv, b"new"), (&json, b"new")]).expect("writes");
        assert_eq!(std::fs::read(&json).expect("reads"), b"new");
        assert_eq!(names(dir.path()), ["d", "r.csv", "r.json"]);
    }

    #[test]
    fn temporaries_of_dead_processes_are_swept_and_live_ones_kept() {
        let dir = tempfile::tempdir().expect("temp dir");
        // Above the largest pid_max Linux allows (2^22): no process can have this PID.
        let dead = ".out.json.4194305.tmp";
        let own = format!(".other.json.{}.tmp", std::process::id());
        for name in [dead, own.as_str(), ".hidden", "x.4194305.tmp", ".a.b.tmp"] {
            std::fs::write(dir.path().join(name), b"partial").expect("writes");
        }
        write_atomically(&dir.path().join("out.json"), b"{}").expect("writes");
        assert_eq!(
            names(dir.path()),
            [
                ".a.b.tmp",
                ".hidden",
                own.as_str(),
                "out.json",
                "x.4194305.tmp"
            ]
        );
    }

    #[test]
    fn temporary_names_are_recognised() {
        assert_eq!(temporary_pid(".x.series.sor.json.123.tmp"), Some(123));
        assert_eq!(temporary_pid(".x.0.tmp"), None);
        assert_eq!(temporary_pid("..123.tmp"), None);
        assert_eq!(temporary_pid(".x.12a.tmp"), None);
        assert_eq!(temporary_pid(".x.-1.tmp"), None);
        assert!(process_is_alive(std::process::id()));
        assert!(!process_is_alive(4_194_305));
    }

    #[test]
    fn the_write_check_leaves_nothing_and_refuses_a_path_under_a_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        check_writable(&dir.path().join("new/sub")).expect("writable");
        assert!(names(dir.path()).is_empty(), "the folders made are removed");
        std::fs::create_dir(dir.path().join("kept")).expect("mkdir");
        check_writable(&dir.path().join("kept")).expect("writable");
        assert_eq!(names(dir.path()), ["kept"]);
        assert!(names(&dir.path().join("kept")).is_empty());
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").expect("writes");
        assert!(check_writable(&file.join("sub")).is_err());
    }
}
