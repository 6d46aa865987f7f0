//! How a phase's declared gathers at the target's buffer combine with the rest of its moved
//! time (docs/models.md §2.4, "Gathers").
//!
//! The random gather sweep says what a size's gathers cost from this size's buffer and from
//! the target's; the window says what the whole phase cost. The estimate adds what the
//! gathers cost more at the target (one after the other). How much of that the rest of the
//! kernel's work may hide depends on how many reads it keeps in flight beside its streams,
//! which nothing declares: the interval's lower end takes the gathers overlapping the rest.

use super::level_move::Overlap;

/// The moved time `t` of a phase (every other move made, its gathers at this size's
/// buffers inside it) with its declared gathers moved to the target's buffers. `more` is
/// what the size's gathers cost more there by the sweep, `there` what they cost there
/// (so `there − more` is what the sweep says they cost here).
///
/// - the estimate, and the one-after-the-other bounds ([`Overlap::Half`], [`Overlap::None`],
///   [`Overlap::AllTraffic`]): `t + more`;
/// - overlapped ([`Overlap::Full`]): the longer of `t` and the gathers' time there, and no
///   more than `t` scaled by the sweep's ratio there over here (where the sweep rates the
///   size's gathers dearer than the whole phase, the kernel's own gathers cost less than the
///   sweep's, and only the ratio carries): `max(t, min(there, t·there/here))`, never above
///   `t + more`.
///
/// With nothing known of the gathers' time there (`there` ≤ `more`), every end is `t + more`.
pub(super) fn with_gathers(t: f64, more: f64, there: f64, overlap: Overlap) -> f64 {
    let serial = t + more;
    let here = there - more;
    match overlap {
        Overlap::Full if here > 0.0 && more > 0.0 => t.max(there.min(t * there / here)),
        _ => serial,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_overlapped_bound_takes_the_longer_of_the_phase_and_its_gathers_there() {
        // A phase of 10 ms whose gathers cost 4 ms here and 12 ms at the target's buffer
        // (8 ms more): the estimate 18 ms, overlapped max(10, 12) = 12 ms.
        let (t, more, there) = (0.010, 0.008, 0.012);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        for o in [Overlap::Half, Overlap::None, Overlap::AllTraffic] {
            assert!(close(with_gathers(t, more, there, o), 0.018));
        }
        assert!(close(with_gathers(t, more, there, Overlap::Full), 0.012));
        // Gathers that stay hidden at the target (6 ms there, 10 ms of phase): overlapped,
        // nothing is added.
        assert!(close(with_gathers(t, 0.004, 0.006, Overlap::Full), t));
        // The sweep rates the size's gathers (12 ms here) dearer than the whole phase
        // (10 ms): only its ratio carries, 10 · 36/12 = 30 ms, below 34 ms serial.
        assert!(close(with_gathers(t, 0.024, 0.036, Overlap::Full), 0.030));
        // Nothing known of the gathers' time there: serial at every end.
        for o in [Overlap::Full, Overlap::Half, Overlap::None] {
            assert!(close(with_gathers(t, 0.008, 0.0, o), 0.018));
            assert!(close(with_gathers(t, 0.0, 0.0, o), t));
        }
    }

    #[test]
    fn overlapped_gathers_never_cost_more_than_serial_ones() {
        for t in [0.001, 0.01, 0.1] {
            for more in [0.0005, 0.005, 0.05] {
                for here in [0.0001, 0.002, 0.02, 0.2] {
                    let there = here + more;
                    let full = with_gathers(t, more, there, Overlap::Full);
                    let serial = with_gathers(t, more, there, Overlap::None);
                    assert!(t <= full && full <= serial, "{t} {more} {here}");
                }
            }
        }
    }
}
