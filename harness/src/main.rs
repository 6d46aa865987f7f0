//! The `harness` command line: parses arguments and calls the library; every error becomes
//! one line on standard error and exit code 2.

mod cli;

fn main() {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`harness devices | head -1`)
    // would panic; restore the default, under which the process ends quietly as the Unix
    // tools do. Results are written to their files before they are printed.
    #[cfg(unix)]
    // SAFETY: called first, before any thread exists; sets the signal's default action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        // Past a file-size limit (`ulimit -f`) a write fails with EFBIG, which the writer
        // reports and cleans up after, instead of the process being killed mid-write.
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // Before any device is opened or thread started: PoCL's and rayon's workers one per CPU,
    // so a run of a few milliseconds uses every core (backend/pinning.rs).
    harness::backend::pinning::pin_worker_threads();
    // Before any buffer is allocated: freed buffers stay in the process (backend/heap.rs).
    harness::backend::heap::keep_freed_memory();
    let code = match cli::run() {
        Ok(()) => 0,
        Err(e) => {
            // One line, and no escape sequence from a file or device name reaches the terminal.
            let line = one_line(&e).replace(['\n', '\r', '\t'], " ");
            let line = harness::export::table::terminal_safe(&line);
            eprintln!("{}", clip(&format!("error: {line}")));
            2
        }
    };
    if cli::was_interrupted() {
        harness::export::end_now(code);
    }
    std::process::exit(code);
}

/// The error and its causes on one line, leaving out a cause the line already says (library
/// errors often print their source in their own message).
fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Longest error line printed: an error quoting its input (a 160 KB size, a graph) quotes
/// only its beginning.
pub(crate) const MAX_LINE: usize = 400;

/// Print an informational line on standard error as every error line is printed: no control
/// character from a file or folder name reaches the terminal, and a line past [`MAX_LINE`]
/// characters is cut.
pub(crate) fn say(line: &str) {
    eprintln!("{}", clip(&harness::export::table::terminal_safe(line)));
}

/// A note on standard error, `note: ` and the text wrapped at 100 columns (a note quoting a
/// kernel's source and a declaration to add runs to several hundred characters), each line
/// as [`say`] prints one.
pub(crate) fn say_note(note: &str) {
    let mut line = String::from("note:");
    for word in note.split_whitespace() {
        if line.chars().count() + 1 + word.chars().count() > 100 && line.trim() != "note:" {
            say(&line);
            line = String::from("     ");
        }
        line.push(' ');
        line.push_str(word);
    }
    say(&line);
}

/// [`say`] on standard output.
pub(crate) fn say_out(line: &str) {
    println!("{}", clip(&harness::export::table::terminal_safe(line)));
}

/// `line` cut to [`MAX_LINE`] characters, saying how long it was.
pub(crate) fn clip(line: &str) -> String {
    let count = line.chars().count();
    if count <= MAX_LINE {
        return line.to_string();
    }
    let head: String = line.chars().take(MAX_LINE - 60).collect();
    format!("{head}… (cut: {count} characters in all)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_and_say_so() {
        assert_eq!(clip("short"), "short");
        let long = "x".repeat(200_000);
        let cut = clip(&long);
        assert!(cut.chars().count() <= MAX_LINE);
        assert!(cut.ends_with("(cut: 200000 characters in all)"));
    }
}
