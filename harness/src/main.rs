//! The `harness` command line: parses arguments and calls the library; every error becomes
//! one line on standard error and exit code 2.

mod cli;

fn main() {
    let code = match cli::run() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    };
    std::process::exit(code);
}
