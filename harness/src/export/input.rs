//! Reading the files a command is given (results, calibrations, specs, kernels, graphs):
//! only regular files, and only up to a size no input of the harness comes near, so a FIFO
//! named `*.json` or a link to `/dev/zero` is an error at once, not a hang or a read until
//! memory runs out.

use std::path::Path;

/// The largest file the harness reads: its inputs (results, calibrations, specs, kernels,
/// graphs) are text of at most a few megabytes.
pub const MAX_READ_BYTES: u64 = 256 << 20;

/// Read a whole input file: only a regular file (a symlink to one is followed), at most
/// [`MAX_READ_BYTES`]. A FIFO, a device (`/dev/zero`), a socket or a folder is an error at
/// once, never a hang or a read until memory runs out.
pub fn read_input(path: &Path) -> std::io::Result<Vec<u8>> {
    read_regular(path, MAX_READ_BYTES)
}

/// [`read_input`] as UTF-8 text.
pub fn read_input_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_input(path)?).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "the file is not UTF-8 text",
        )
    })
}

/// [`read_input`] with a cap of `cap` bytes.
pub fn read_regular(path: &Path, cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        // A FIFO opens at once (and is then refused) instead of waiting for a writer.
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is a folder, not a file",
        ));
    }
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a device, a named pipe or a socket); give a file",
        ));
    }
    let too_big = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than the {} MiB an input file may have", cap >> 20),
        )
    };
    if meta.len() > cap {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(meta.len()).unwrap_or(usize::MAX))
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::OutOfMemory, "out of memory"))?;
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_big());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read_and_within_the_cap() {
        let dir = tempfile::tempdir().expect("temp dir");
        let plain = dir.path().join("a.json");
        std::fs::write(&plain, b"{}").expect("writes");
        assert_eq!(read_input_text(&plain).expect("reads"), "{}");
        let fifo = dir.path().join("fifo.json");
        let c = std::ffi::CString::new(fifo.to_str().expect("utf-8")).expect("no NUL");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_input(&fifo).expect_err("a FIFO is refused, not waited on");
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).expect("links");
        let e = read_input(&zero).expect_err("a device is refused, not read for ever");
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_input(dir.path()).expect_err("a folder is refused");
        assert!(e.to_string().contains("folder"), "{e}");
        std::fs::write(&plain, vec![b' '; 2048]).expect("writes");
        assert!(read_regular(&plain, 1024).is_err());
        assert_eq!(read_regular(&plain, 2048).expect("reads").len(), 2048);
    }
}
