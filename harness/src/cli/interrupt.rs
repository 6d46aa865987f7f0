//! Ctrl-C: one handler for every command, installed before the command starts. SIGTERM and
//! SIGHUP (`kill`, `timeout`, a batch scheduler, a closed terminal) take the same path.
//!
//! A command that stops cleanly between measurements asks for [`interrupt_flag`]: the first
//! Ctrl-C then only sets the flag (the command ends after the current measurement), a second
//! one ends the process at once. Any other command ends at the first Ctrl-C. Either way the
//! process ends through [`harness::export::exit_removing_temporaries`]: its temporary files
//! are removed, and a unit of related files being renamed into place is finished first, so
//! no file is left half-written and no JSON stands beside an older CSV.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The process's interrupt flag, and whether the running command watches it.
struct State {
    flag: Arc<AtomicBool>,
    watched: AtomicBool,
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(|| State {
        flag: Arc::new(AtomicBool::new(false)),
        watched: AtomicBool::new(false),
    })
}

/// Install the Ctrl-C handler (once, at start-up).
pub(crate) fn install() {
    let state = state();
    // Without a handler (another already set) Ctrl-C keeps its default: the process ends.
    let _ = ctrlc::set_handler(move || {
        let again = state.flag.swap(true, Ordering::SeqCst);
        if again || !state.watched.load(Ordering::SeqCst) {
            harness::export::exit_removing_temporaries(130);
        }
        eprintln!(
            "\ninterrupted: stopping after the current measurement (Ctrl-C again to quit now)"
        );
    });
}

/// The flag the first Ctrl-C sets, for a command that checks it between measurements.
pub(crate) fn interrupt_flag() -> Arc<AtomicBool> {
    let state = state();
    state.watched.store(true, Ordering::SeqCst);
    state.flag.clone()
}

/// Whether a Ctrl-C, SIGTERM or SIGHUP arrived while the command ran: the process then ends
/// without the C library's exit handlers ([`harness::export::end_now`]), as the device
/// runtime's threads may still be at work.
pub(crate) fn was_interrupted() -> bool {
    state().flag.load(Ordering::SeqCst)
}
