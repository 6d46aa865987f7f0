//! The time of messages, of a set of messages on a bus or a grid, and of a reduction, as the
//! DVM Predictor costs them.
//!
//! - One message of `n` bytes: `T(n) = Ts + n · Tb`.
//! - A set of messages on a bus: they cannot overlap, so the time is the sum of `T(n)` over
//!   every pair of distinct processors that exchange bytes.
//! - On a grid they travel at once; the time is that of the slowest, a message of `L` bytes
//!   over `l` hops sent in packets of `S` bytes as a pipeline of `⌈L/S⌉ + l − 1` stages of
//!   `T(S)` each. The real-valued optimum is `S* = sqrt(L · Ts / ((l − 1) · Tb))`; the
//!   Predictor starts at the integer part (1 if zero) and walks to the neighbouring integer
//!   in the decreasing direction until the time grows.
//! - A reduction of `size` bytes over `N` processors, `Π` of them along the loop's dimensions:
//!   on a bus `T(size) · (Π + N − 2)`; on a grid `T(size) · (2 · D + C)` with `D` the largest
//!   distance inside the processors holding the loop and `C` the distance from them to the
//!   farthest corner of the grid.

use super::network::{Network, NetworkKind};
use super::topology::ProcessorGrid;
use crate::units::Seconds;

/// `Ts + bytes · Tb`: one message.
///
/// ```
/// use harness::model::cluster::{message_time, Network, NetworkKind};
/// use harness::units::Seconds;
/// let net = Network::new(NetworkKind::Bus, Seconds(75e-6), 0.2e-6, 1.0, None).unwrap();
/// assert!((message_time(&net, 1000).0 - 275e-6).abs() < 1e-15);
/// ```
pub fn message_time(net: &Network, bytes: u64) -> Seconds {
    Seconds(net.start.0 + bytes as f64 * net.byte_time)
}

/// A message of `bytes` over `hops` grid links, sent as a pipeline of packets of the best
/// integer size (see the module's documentation).
pub fn pipelined_time(net: &Network, bytes: u64, hops: usize) -> Seconds {
    if hops <= 1 || bytes <= 1 {
        return Seconds(message_time(net, bytes).0 * hops.max(1) as f64);
    }
    let stages = |s: u64| -> f64 {
        let packets = bytes.div_ceil(s);
        (packets + hops as u64 - 1) as f64 * (net.start.0 + s as f64 * net.byte_time)
    };
    let best_real = if net.byte_time > 0.0 {
        (bytes as f64 * net.start.0 / ((hops - 1) as f64 * net.byte_time)).sqrt()
    } else {
        bytes as f64
    };
    let mut s = (best_real.floor() as u64).clamp(1, bytes);
    let mut t = stages(s);
    let down = if s > 1 { stages(s - 1) } else { f64::INFINITY };
    let up = if s < bytes {
        stages(s + 1)
    } else {
        f64::INFINITY
    };
    let step: i64 = if down < t && down <= up {
        -1
    } else if up < t {
        1
    } else {
        0
    };
    if step == 0 {
        return Seconds(t);
    }
    loop {
        let next = s as i64 + step;
        if next < 1 || next as u64 > bytes {
            break;
        }
        let tn = stages(next as u64);
        if tn >= t {
            break;
        }
        s = next as u64;
        t = tn;
    }
    Seconds(t)
}

/// The time of a set of messages `(from, to, bytes)` on the network: the sum on a bus, the
/// slowest pipelined message on a grid. Messages from a processor to itself cost nothing.
pub fn transfer_time(
    net: &Network,
    grid: &ProcessorGrid,
    transfers: &[(usize, usize, u64)],
) -> Seconds {
    let real = transfers.iter().filter(|&&(a, b, n)| a != b && n > 0);
    match net.kind {
        NetworkKind::Bus => Seconds(real.map(|&(_, _, n)| message_time(net, n).0).sum()),
        NetworkKind::Grid => Seconds(
            real.map(|&(a, b, n)| pipelined_time(net, n, grid.distance(a, b)).0)
                .fold(0.0, f64::max),
        ),
    }
}

/// The time of a reduction of `bytes` over every processor of `grid` (a loop spread over the
/// whole grid): `T(bytes) · (2N − 2)` on a bus, `T(bytes) · 2 · Σ(pk − 1)` on a grid (the
/// corner distance is 0 when the loop covers the grid).
///
/// ```
/// use harness::model::cluster::{reduction_time, Network, NetworkKind, ProcessorGrid};
/// use harness::units::Seconds;
/// let grid = ProcessorGrid::parse("2x2").unwrap();
/// let bus = Network::new(NetworkKind::Bus, Seconds(1.0), 0.0, 1.0, None).unwrap();
/// assert_eq!(reduction_time(&bus, &grid, 8).0, 6.0); // Π = 4, N = 4: 4 + 4 − 2
/// let mesh = Network { kind: NetworkKind::Grid, ..bus };
/// assert_eq!(reduction_time(&mesh, &grid, 8).0, 4.0); // 2 · (1 + 1) + 0
/// ```
pub fn reduction_time(net: &Network, grid: &ProcessorGrid, bytes: u64) -> Seconds {
    let n = grid.count() as f64;
    let one = message_time(net, bytes).0;
    match net.kind {
        NetworkKind::Bus => Seconds(one * (n + n - 2.0)),
        NetworkKind::Grid => {
            let diameter: usize = grid.extents().iter().map(|&p| p - 1).sum();
            Seconds(one * (2 * diameter) as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(kind: NetworkKind, ts: f64, tb: f64) -> Network {
        Network::new(kind, Seconds(ts), tb, 1.0, None).unwrap()
    }

    #[test]
    fn a_bus_sums_and_a_grid_takes_the_farthest() {
        let grid = ProcessorGrid::parse("1x3").unwrap();
        let t = [(0, 1, 100), (1, 2, 100), (2, 2, 999), (0, 2, 0)];
        let bus = net(NetworkKind::Bus, 10.0, 1.0);
        assert_eq!(transfer_time(&bus, &grid, &t).0, 220.0);
        let mesh = net(NetworkKind::Grid, 10.0, 1.0);
        assert_eq!(transfer_time(&mesh, &grid, &t).0, 110.0);
    }

    #[test]
    fn pipelining_by_hand() {
        // L = 100 bytes, 3 hops, Ts = 8, Tb = 1: S* = sqrt(100·8/2) = 20: ⌈100/20⌉ + 2 = 7
        // stages of 28 = 196. Neighbours: S = 19 → 8 stages · 27 = 216; S = 21 → 7 · 29 = 203.
        let mesh = net(NetworkKind::Grid, 8.0, 1.0);
        assert_eq!(pipelined_time(&mesh, 100, 3).0, 196.0);
        // Unpipelined, the message would take 3 · 108 = 324.
        assert!(pipelined_time(&mesh, 100, 3).0 < 324.0);
        // One hop: the plain message.
        assert_eq!(pipelined_time(&mesh, 100, 1).0, 108.0);
        // No start time: packets of one byte, 100 + 2 stages of 1.
        assert_eq!(
            pipelined_time(&net(NetworkKind::Grid, 0.0, 1.0), 100, 3).0,
            102.0
        );
        // The search walks to a better neighbour: brute force agrees on many cases.
        for (l, hops, ts, tb) in [
            (1000u64, 4usize, 3.0, 0.01),
            (37, 2, 1.0, 0.5),
            (5000, 7, 50.0, 0.2),
        ] {
            let m = net(NetworkKind::Grid, ts, tb);
            let brute = (1..=l)
                .map(|s| (l.div_ceil(s) + hops as u64 - 1) as f64 * (ts + s as f64 * tb))
                .fold(f64::INFINITY, f64::min);
            let got = pipelined_time(&m, l, hops).0;
            assert!(got <= brute * 1.05, "{l} {hops}: {got} vs {brute}");
        }
    }

    #[test]
    fn reductions_by_hand() {
        let g = ProcessorGrid::parse("4x4").unwrap();
        let bus = net(NetworkKind::Bus, 2.0, 0.5);
        // T(4) = 4; Π + N − 2 = 16 + 16 − 2 = 30.
        assert_eq!(reduction_time(&bus, &g, 4).0, 120.0);
        let mesh = net(NetworkKind::Grid, 2.0, 0.5);
        // 2 · (3 + 3) = 12 messages.
        assert_eq!(reduction_time(&mesh, &g, 4).0, 48.0);
        let single = ProcessorGrid::parse("1").unwrap();
        assert_eq!(reduction_time(&bus, &single, 4).0, 0.0);
        assert_eq!(reduction_time(&mesh, &single, 4).0, 0.0);
    }
}
