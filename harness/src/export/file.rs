//! Writing files so that no reader ever sees a partial one: a temporary file in the same
//! folder, then a rename. Every file the harness writes goes through [`write_atomically`]
//! (one file) or [`write_together`] (related files, renamed into place one after another
//! only once every one of them is written).
//!
//! A temporary file is named `.NAME.harness-HOST-PID-NONCE.tmp`: a marker no other program
//! uses, this machine's name, the process and a number used once. While it exists its path
//! is held in a process-wide registry, so an interrupted process can remove its own
//! ([`exit_removing_temporaries`]); and the first write into a folder removes the
//! temporaries there that a harness process of this machine killed outright (SIGKILL, a
//! crash) left behind: those whose PID is no live process ([`sweep_stale_temporaries`]).
//! Files of other programs and of other machines sharing the folder are never touched.
//!
//! Only a regular file (or nothing) is ever replaced by a rename. A symlink is followed (the
//! link stays, the file it names is replaced); a character device or a FIFO (`/dev/null`,
//! `/dev/stdout`, a named pipe with a reader) is written through; anything else (a block
//! device, a socket, a folder, a symlink to nothing) is refused.

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
        let targets = files
            .iter()
            .map(|(path, _)| resolve(path).map_err(failed(path)))
            .collect::<Result<Vec<_>, _>>()?;
        for ((path, bytes), target) in files.iter().zip(&targets) {
            if let Target::Replace(real) = target {
                temporaries.push(write_temporary(real, bytes).map_err(failed(path))?);
            }
        }
        let _folders = lock_folders(targets.iter().filter_map(|t| match t {
            Target::Replace(real) => Some(real.as_path()),
            Target::Through(_) => None,
        }));
        let mut reg = registry();
        // A folder (or a special file, put there since) where a file should go would fail
        // its rename after others succeeded.
        for ((path, _), target) in files.iter().zip(&targets) {
            if let Target::Replace(real) = target {
                still_replaceable(real).map_err(failed(path))?;
            }
        }
        let mut temporary = temporaries.iter();
        for ((path, bytes), target) in files.iter().zip(&targets) {
            match target {
                Target::Replace(real) => {
                    let tmp = temporary.next().expect("one temporary per file replaced");
                    std::fs::rename(tmp, real).map_err(failed(path))?;
                    reg.pending.retain(|p| p != tmp);
                }
                Target::Through(special) => write_through(special, bytes).map_err(failed(path))?,
            }
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

/// Exclusive locks (`flock`) on the folders a unit renames into, held while its files are
/// renamed: two processes writing units into one folder (two `series` at once) rename
/// theirs one after the other, never interleaved, so a JSON always stands beside its own
/// CSV. Best effort: a file system without `flock` leaves the renames unlocked. Released
/// when dropped.
struct FolderLocks {
    _held: Vec<std::fs::File>,
}

fn lock_folders<'p>(paths: impl Iterator<Item = &'p Path>) -> FolderLocks {
    let mut dirs: Vec<PathBuf> = paths
        .map(|p| {
            let dir = folder_of(p);
            dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
        })
        .collect();
    // One order for every process: no two wait on each other.
    dirs.sort();
    dirs.dedup();
    let mut held = Vec::with_capacity(dirs.len());
    #[cfg(unix)]
    for dir in dirs {
        use std::os::unix::io::AsRawFd;
        if let Ok(file) = std::fs::File::open(&dir) {
            // SAFETY: flock on a descriptor this function owns; closing it releases the lock.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                held.push(file);
            }
        }
    }
    FolderLocks { _held: held }
}

/// How a destination is written.
#[derive(Debug, PartialEq)]
enum Target {
    /// A regular file or nothing (the path, a symlink's resolved): a temporary, a rename.
    Replace(PathBuf),
    /// A character device or a FIFO: opened and written, never replaced.
    Through(PathBuf),
}

fn refused(what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{what}; give the path of a regular file"),
    )
}

/// How `path` is to be written, or why it cannot be.
fn resolve(path: &Path) -> std::io::Result<Target> {
    let meta = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Target::Replace(path.to_path_buf()))
        }
        Err(e) => return Err(e),
        Ok(meta) => meta,
    };
    if !meta.file_type().is_symlink() {
        return classify(path, &meta, path.to_path_buf());
    }
    let followed = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(refused("it is a symlink to nothing"))
        }
        Err(e) => return Err(e),
        Ok(meta) => meta,
    };
    if followed.is_file() && !path.starts_with("/dev") && !path.starts_with("/proc") {
        // Replace the file the link names, in its folder; the link stays.
        return Ok(Target::Replace(std::fs::canonicalize(path)?));
    }
    if followed.is_file() {
        // `/dev/stdout` redirected to a file (`> out.txt`): the shell holds that file open,
        // so it is appended to, never replaced under it.
        return Ok(Target::Through(path.to_path_buf()));
    }
    classify(path, &followed, path.to_path_buf())
}

/// A file that exists: regular (`real` replaced), written through, or refused.
fn classify(path: &Path, meta: &std::fs::Metadata, real: PathBuf) -> std::io::Result<Target> {
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(Target::Replace(real));
    }
    if kind.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "a folder is in the way",
        ));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_char_device() || kind.is_fifo() {
            return Ok(Target::Through(path.to_path_buf()));
        }
        if kind.is_block_device() {
            return Err(refused("it is a block device"));
        }
        if kind.is_socket() {
            return Err(refused("it is a socket"));
        }
    }
    Err(refused("it is not a regular file"))
}

/// Just before a rename: `path` is still a regular file or absent.
fn still_replaceable(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_file() => match classify(path, &meta, path.to_path_buf())? {
            Target::Replace(_) => Ok(()),
            Target::Through(_) => Err(refused("it is not a regular file")),
        },
        _ => Ok(()),
    }
}

/// Write `bytes` into a character device or FIFO (or a file behind `/dev/stdout`) without
/// creating or replacing anything. A FIFO without a reader is an error, not a hang.
fn write_through(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    // Append: for a regular file behind `/dev/stdout`, after what the shell wrote there.
    options.append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let mut file = options.open(path).map_err(|e| {
        if e.raw_os_error() == Some(libc::ENXIO) {
            std::io::Error::new(e.kind(), "a named pipe that nothing reads")
        } else {
            e
        }
    })?;
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        let fd = file.as_raw_fd();
        // SAFETY: fcntl on a descriptor this function owns; clears O_NONBLOCK so writes wait
        // for the reader instead of failing with EAGAIN.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
            }
        }
    }
    file.write_all(bytes)?;
    file.flush()
}

/// The marker between a temporary's file name and its owner.
const MARKER: &str = "harness-";

/// This machine's name as it appears in temporaries' names: `[A-Za-z0-9.-]`, at most 64.
fn host_tag() -> &'static str {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is writable for its length; gethostname NUL-terminates or
        // truncates within it.
        let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len() - 1) } == 0;
        let name = if ok {
            let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
            String::from_utf8_lossy(&buf[..end]).into_owned()
        } else {
            String::new()
        };
        let tag: String = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
            .take(64)
            .collect();
        if tag.is_empty() {
            "localhost".to_string()
        } else {
            tag
        }
    })
}

/// A temporary's name for the file `name`: `.NAME.harness-HOST-PID-NONCE.tmp` (a long
/// NAME shortened so the whole stays a valid file name).
fn temporary_name(name: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    let nonce = (COUNTER.fetch_add(1, Ordering::Relaxed) << 32) ^ nanos;
    let mut end = name.len().min(120);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        ".{}.{MARKER}{}-{}-{nonce:x}.tmp",
        &name[..end],
        host_tag(),
        std::process::id()
    )
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
    let tmp = dir.join(temporary_name(&name));
    let mut file = {
        let mut reg = registry();
        reg.pending.push(tmp.clone());
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
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
    if let Some(file) = dir
        .ancestors()
        .find(|a| std::fs::metadata(a).is_ok_and(|m| !m.is_dir()))
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is a file, not a folder", file.display()),
        ));
    }
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
    end_now(code)
}

/// End the process with `code` at once, after flushing standard output and error, without
/// running the C library's exit handlers and C++ static destructors: a run interrupted while
/// a device runtime's threads are still at work (PoCL compiling a kernel) would otherwise
/// tear the runtime down under them (SIGSEGV, or "pure virtual method called" and SIGABRT,
/// in the CLI fuzzer's signal cases). Nothing of the harness's own needs those handlers:
/// its files are written and renamed, or removed, before this is called.
pub fn end_now(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process at once; it is async-signal-safe and takes no pointer.
    unsafe { libc::_exit(code) }
}

/// Sweep `dir` the first time this process writes into it.
fn sweep_once(dir: &Path) {
    let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    if registry().swept.insert(key) {
        sweep_stale_temporaries(dir);
    }
}

/// Remove the harness's temporaries (`.NAME.harness-HOST-PID-NONCE.tmp`) in `dir` made on
/// this machine by a process no longer alive: what a run killed in the middle of a write
/// left. Returns the files removed. Temporaries of live processes (this one's included), of
/// other machines sharing the folder, and every file of another program are kept.
pub fn sweep_stale_temporaries(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some((host, pid)) = temporary_owner(&name) else {
            continue;
        };
        if host == host_tag() && pid != std::process::id() && !process_is_alive(pid) {
            let path = entry.path();
            if std::fs::remove_file(&path).is_ok() {
                removed.push(path);
            }
        }
    }
    removed
}

/// The host and PID in a harness temporary's name `.NAME.harness-HOST-PID-NONCE.tmp`, or
/// `None` for any other name.
fn temporary_owner(name: &str) -> Option<(&str, u32)> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (stem, owner) = inner.rsplit_once(&format!(".{MARKER}"))?;
    let (rest, nonce) = owner.rsplit_once('-')?;
    let (host, pid) = rest.rsplit_once('-')?;
    let digits = |s: &str, hex: bool| {
        !s.is_empty()
            && s.bytes().all(|b| {
                if hex {
                    b.is_ascii_hexdigit()
                } else {
                    b.is_ascii_digit()
                }
            })
    };
    if stem.is_empty() || host.is_empty() || !digits(pid, false) || !digits(nonce, true) {
        return None;
    }
    Some((host, pid.parse().ok().filter(|&p| p > 0)?))
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

/// The longest [`file_name_part`], in bytes: several parts and a suffix still make a valid
/// file name (255 bytes on common file systems).
pub const MAX_NAME_PART: usize = 80;

/// `text` (a name from a spec, a graph, a device) as one part of a file name: ASCII letters,
/// digits, `-` and `_` kept, `.` kept but not first, every other character `_` (so no `/`,
/// no `..` component, no control character), at most [`MAX_NAME_PART`] bytes; `_` for
/// nothing.
///
/// ```
/// use harness::export::file_name_part;
/// assert_eq!(file_name_part("x/../../escaped"), "x_.._.._escaped");
/// assert_eq!(file_name_part("sor"), "sor");
/// assert_eq!(file_name_part(".."), "_.");
/// ```
pub fn file_name_part(text: &str) -> String {
    let mut part: String = text
        .chars()
        .take(MAX_NAME_PART)
        .enumerate()
        .map(|(i, c)| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c,
            '.' if i > 0 => c,
            _ => '_',
        })
        .collect();
    if part.is_empty() {
        part.push('_');
    }
    part
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
    fn only_the_harness_temporaries_of_dead_processes_here_are_swept() {
        let dir = tempfile::tempdir().expect("temp dir");
        let host = host_tag();
        // Above the largest pid_max Linux allows (2^22): no process can have this PID.
        let dead = format!(".out.json.harness-{host}-4194305-1f.tmp");
        let own = format!(".other.json.harness-{host}-{}-2.tmp", std::process::id());
        let elsewhere = ".out.json.harness-another-node-4194305-3.tmp";
        // Another program's file in the old shape: never touched.
        let foreign = ".out.json.4194305.tmp";
        for name in [&dead, &own, elsewhere, foreign, ".hidden", ".a.b.tmp"] {
            std::fs::write(dir.path().join(name), b"partial").expect("writes");
        }
        write_atomically(&dir.path().join("out.json"), b"{}").expect("writes");
        let mut kept = vec![
            ".a.b.tmp",
            ".hidden",
            foreign,
            elsewhere,
            own.as_str(),
            "out.json",
        ];
        kept.sort();
        assert_eq!(names(dir.path()), kept);
    }

    #[test]
    fn temporary_names_are_recognised() {
        let name = temporary_name("x.series.sor.json");
        let (host, pid) = temporary_owner(&name).expect("own shape");
        assert_eq!((host, pid), (host_tag(), std::process::id()));
        assert_eq!(
            temporary_owner(".x.harness-my-host-123-ab.tmp"),
            Some(("my-host", 123))
        );
        assert_eq!(temporary_owner(".x.series.sor.json.123.tmp"), None);
        assert_eq!(temporary_owner(".x.harness-h-0-1.tmp"), None);
        assert_eq!(temporary_owner("..harness-h-1-1.tmp"), None);
        assert_eq!(temporary_owner(".x.harness-h-12a-1.tmp"), None);
        assert_eq!(temporary_owner(".x.harness--1-1.tmp"), None);
        assert_eq!(temporary_owner(".x.harness-h-1-zz.tmp"), None);
        assert!(temporary_name(&"é".repeat(200)).len() < 255);
        assert_ne!(temporary_name("a"), temporary_name("a"), "a nonce each");
        assert!(process_is_alive(std::process::id()));
        assert!(!process_is_alive(4_194_305));
    }

    #[test]
    fn a_symlink_is_followed_and_kept() {
        let dir = tempfile::tempdir().expect("temp dir");
        let real = dir.path().join("real.json");
        std::fs::write(&real, b"old").expect("writes");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).expect("links");
        write_atomically(&link, b"new").expect("writes");
        let meta = std::fs::symlink_metadata(&link).expect("exists");
        assert!(meta.file_type().is_symlink(), "the link is not replaced");
        assert_eq!(std::fs::read(&real).expect("reads"), b"new");
        assert_eq!(names(dir.path()), ["link.json", "real.json"]);
        // A link to nothing is refused, and nothing is created.
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("absent"), &dangling).expect("links");
        let e = write_atomically(&dangling, b"x").expect_err("refused");
        assert!(e.to_string().contains("symlink to nothing"), "{e}");
        assert_eq!(names(dir.path()), ["dangling", "link.json", "real.json"]);
    }

    #[test]
    fn a_file_behind_dev_fd_is_appended_to_not_replaced() {
        use std::io::Write;
        use std::os::unix::io::AsRawFd;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("out.txt");
        let mut shell = std::fs::File::create(&path).expect("creates");
        shell.write_all(b"printed;").expect("writes");
        let via = PathBuf::from(format!("/dev/fd/{}", shell.as_raw_fd()));
        write_atomically(&via, b"trace").expect("writes");
        assert_eq!(std::fs::read(&path).expect("reads"), b"printed;trace");
        assert_eq!(names(dir.path()), ["out.txt"]);
    }

    #[test]
    fn a_device_is_written_through_not_replaced() {
        write_atomically(Path::new("/dev/null"), b"discarded").expect("writes");
        let meta = std::fs::symlink_metadata("/dev/null").expect("exists");
        use std::os::unix::fs::FileTypeExt;
        assert!(meta.file_type().is_char_device());
        assert_eq!(
            resolve(Path::new("/dev/null")).expect("resolves"),
            Target::Through(PathBuf::from("/dev/null"))
        );
    }

    #[test]
    fn a_fifo_is_written_through_or_refused_without_a_reader() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fifo = dir.path().join("pipe.json");
        let c = std::ffi::CString::new(fifo.to_str().expect("utf-8")).expect("no NUL");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No reader: an error at once, not a hang, and the FIFO stays.
        let e = write_atomically(&fifo, b"x").expect_err("no reader");
        assert!(e.to_string().contains("nothing reads"), "{e}");
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).expect("reads"))
        };
        // Wait for the reader to open its end.
        let mut tries = 0;
        loop {
            match write_atomically(&fifo, b"through") {
                Ok(()) => break,
                Err(_) if tries < 500 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(reader.join().expect("joins"), b"through");
        use std::os::unix::fs::FileTypeExt;
        let meta = std::fs::symlink_metadata(&fifo).expect("exists");
        assert!(meta.file_type().is_fifo(), "the FIFO is not replaced");
        assert_eq!(names(dir.path()), ["pipe.json"]);
    }

    #[test]
    fn units_renamed_into_one_folder_wait_for_each_other() {
        use std::os::unix::io::AsRawFd;
        let dir = tempfile::tempdir().expect("temp dir");
        // Another process's unit in the middle of its renames holds the folder.
        let other = std::fs::File::open(dir.path()).expect("opens the folder");
        // SAFETY: flock on a descriptor the test owns.
        assert_eq!(unsafe { libc::flock(other.as_raw_fd(), libc::LOCK_EX) }, 0);
        let (csv, json) = (dir.path().join("r.csv"), dir.path().join("r.json"));
        let writer = {
            let (csv, json) = (csv.clone(), json.clone());
            std::thread::spawn(move || write_together(&[(&csv, b"new"), (&json, b"new")]))
        };
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert!(
            !csv.exists() && !json.exists(),
            "renamed while the folder was held"
        );
        drop(other);
        writer.join().expect("joins").expect("writes");
        assert_eq!(std::fs::read(&json).expect("reads"), b"new");
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
