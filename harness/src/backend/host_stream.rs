//! Streaming loops the host backend's twins share: the microbenchmarks' and the STREAM
//! workload's. Each splits its arrays into one contiguous block per core
//! ([`host_pool`](super::host_pool), on cache-line boundaries), and each block's loop is a
//! plain zip the compiler vectorizes (an indexed loop checks every bound, does not vectorize
//! and streams at half the rate).

use std::ops::{Add, Mul};

use super::host_pool::{for_each_mut, LINE_F32};

/// Elements the streaming reductions sum per partial (eight lanes each), and the unit the
/// sweep's partial sums are counted in.
pub const STREAM_CHUNK: usize = 1 << 14;

/// Elements of `T` per 64-byte cache line: the blocks the host pool hands out.
fn line<T>() -> usize {
    (LINE_F32 * 4 / std::mem::size_of::<T>()).max(1)
}

/// a = b + q·c: the twin of every triad (the bandwidth sweep's, BabelStream's in floats and
/// doubles, STREAM's).
pub fn triad_into<T>(a: &mut [T], b: &[T], c: &[T], q: T)
where
    T: Copy + Send + Sync + Add<Output = T> + Mul<Output = T>,
{
    for_each_mut(a, line::<T>(), |at, a| {
        let (b, c) = (&b[at..at + a.len()], &c[at..at + a.len()]);
        a.iter_mut()
            .zip(b)
            .zip(c)
            .for_each(|((a, &b), &c)| *a = b + q * c)
    });
}

/// c = a + b: the twin of BabelStream's add (floats and doubles) and of STREAM's vadd.
pub fn add_into<T>(c: &mut [T], a: &[T], b: &[T])
where
    T: Copy + Send + Sync + Add<Output = T>,
{
    for_each_mut(c, line::<T>(), |at, c| {
        let (a, b) = (&a[at..at + c.len()], &b[at..at + c.len()]);
        c.iter_mut()
            .zip(a)
            .zip(b)
            .for_each(|((c, &a), &b)| *c = a + b)
    });
}

/// The sum of `values` in 32 independent lanes (element k into lane k mod 32), so a host
/// reduction (the microbenchmarks' read, BabelStream's dot) streams at the caches' pace
/// instead of one dependent addition's latency per element; the lanes are a fixed-size array
/// the compiler keeps in vector registers, several of them, since one (eight lanes) bound the
/// read at one vector add's latency per eight floats (an EPYC core: 71 GB/s from its L1, where
/// the copy streams 165).
pub fn lane_sum(values: &[f32]) -> f32 {
    lane_fold(values, values, |v, _| v)
}

/// The sum of `x[k]·y[k]` in the lanes of [`lane_sum`].
pub fn lane_dot(x: &[f32], y: &[f32]) -> f32 {
    lane_fold(x, y, |x, y| x * y)
}

fn lane_fold(x: &[f32], y: &[f32], term: impl Fn(f32, f32) -> f32) -> f32 {
    const LANES: usize = 32;
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    let mut lanes = [0.0f32; LANES];
    let (xs, ys) = (x.chunks_exact(LANES), y.chunks_exact(LANES));
    let (x_tail, y_tail) = (xs.remainder(), ys.remainder());
    for (xc, yc) in xs.zip(ys) {
        for j in 0..LANES {
            lanes[j] += term(xc[j], yc[j]);
        }
    }
    for (j, (&a, &b)) in x_tail.iter().zip(y_tail).enumerate() {
        lanes[j] += term(a, b);
    }
    lanes.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streaming_loops_compute_every_element_across_chunks() {
        let n = 3 * STREAM_CHUNK + 5;
        let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
        let mut c = vec![0.0f32; n];
        add_into(&mut c, &a, &b);
        assert!((0..n).all(|i| c[i] == a[i] + b[i]));
        let mut t = vec![0.0f32; n];
        triad_into(&mut t, &a, &b, 0.5);
        assert!((0..n).all(|i| t[i] == a[i] + 0.5 * b[i]));
    }

    #[test]
    fn the_lane_sums_add_every_element_and_the_tail() {
        // 100 elements: three rounds of 32 lanes and a tail of four.
        let v: Vec<f32> = (1..=100).map(|i| i as f32).collect();
        assert_eq!(lane_sum(&v), 5050.0);
        assert_eq!(
            lane_dot(&v, &v[..99]),
            (1..=99).map(|i| (i * i) as f32).sum::<f32>()
        );
        assert_eq!(lane_sum(&[]), 0.0);
    }
}
