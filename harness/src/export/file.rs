//! Writing files so that no reader ever sees a partial one: a temporary file in the same
//! folder, then a rename. Every file the harness writes goes through [`write_atomically`].

use std::path::{Path, PathBuf};

/// Write `bytes` to `path` through a temporary file in the same folder and a rename, so a
/// reader never sees a partial file and an interrupted run leaves none behind.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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

    #[test]
    fn writes_whole_files_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("sub/out.json");
        write_atomically(&path, b"{}").expect("writes");
        write_atomically(&path, b"[1]").expect("replaces");
        assert_eq!(std::fs::read(&path).expect("reads"), b"[1]");
        let left: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
            .expect("lists")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("out.json")]);
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        // A folder where the file should go: the rename fails.
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).expect("mkdir");
        std::fs::write(path.join("x"), b"x").expect("fills it");
        assert!(write_atomically(&path, b"data").is_err());
        let left = std::fs::read_dir(dir.path()).expect("lists").count();
        assert_eq!(left, 1, "only the folder remains");
    }
}
