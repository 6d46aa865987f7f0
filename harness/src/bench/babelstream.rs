//! BabelStream's five kernels at the memory level, run and reported as BabelStream runs and
//! reports them, so that the number can stand beside BabelStream's own build.
//!
//! copy, mul, add, triad and dot on 2^25 elements per array (BabelStream's `-s`; fewer where
//! the three arrays would take more than 3/16 of the device's memory), in floats (BabelStream's `--float`, what the
//! calibration runs) or doubles (BabelStream's default), launched as BabelStream launches
//! them (one element per executor and, as in BabelStream, no bounds check: the arrays hold a
//! whole number of work-groups; dot with partial sums of 256 products each), in
//! BabelStream's order for 100 iterations (10 with `--quick`; the same quantities, fewer
//! samples), timed as BabelStream times them (host wall clock from launch to completion; the
//! device's timer beside it, from a second launch of the same kernel in the first eleven (six
//! with `--quick`) iterations) and reported as it reports them: MB/s (10^6 bytes) from the
//! fastest iteration, with the slowest and the mean; BabelStream leaves the first iteration
//! out. The arrays are then checked against the same recurrence on the host, as BabelStream
//! does.
//!
//! The element type matters on a GPU: one float per executor keeps 4 bytes in flight per
//! thread, which on an H100 (270,336 resident threads, about 1 MB in flight) is short of what
//! its memory's latency × bandwidth asks for (about 1.5 MB); doubles keep twice as much.

use serde::{Deserialize, Serialize};

use super::bandwidth::blocked;
use super::kernels::fp64_program;
use super::{verify, BenchContext, BenchError};
use crate::backend::{Arg, Buffer, Launch, Program};

/// BabelStream's default array length (its `-s`), elements.
pub const BABELSTREAM_ELEMENTS: usize = 1 << 25;
/// Iterations whose kernels are launched a second time for the device's own timer, the first
/// of them left out as BabelStream leaves it out: the device-timed rate is the fastest of ten.
/// The second launches doubled the stage's time (17 of a 125 s calibration on a 2-vCPU Intel
/// Xeon VM's PoCL) for a figure that BabelStream itself does not report. A quick look's
/// fastest is of five ([`QUICK_DEVICE_TIMED_ITERATIONS`]).
const DEVICE_TIMED_ITERATIONS: usize = 11;
const QUICK_DEVICE_TIMED_ITERATIONS: usize = 6;
/// Iterations of the five kernels: BabelStream's default, and a quick look's.
const ITERATIONS: usize = 100;
const QUICK_ITERATIONS: usize = 10;
/// Products each executor of the dot kernel sums.
const DOT_ELEMENTS_PER_EXECUTOR: usize = 256;
/// BabelStream's scalar and initial values.
const SCALAR: f64 = 0.4;
const INIT: [f64; 3] = [0.1, 0.2, 0.0];

/// The arrays' element type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit floats (BabelStream's `--float`); the calibration's choice.
    #[default]
    Float,
    /// 64-bit doubles, BabelStream's default.
    Double,
}

impl Precision {
    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            Precision::Float => 4,
            Precision::Double => 8,
        }
    }

    /// The element type's name in the plural, as the report prints it.
    pub fn plural(self) -> &'static str {
        match self {
            Precision::Float => "floats",
            Precision::Double => "doubles",
        }
    }

    fn kernel(self, name: &str) -> String {
        match self {
            Precision::Float => format!("bs_{name}"),
            Precision::Double => format!("bs64_{name}"),
        }
    }

    fn scalar(self, v: f64) -> Arg<'static> {
        match self {
            Precision::Float => Arg::F32(v as f32),
            Precision::Double => Arg::F64(v),
        }
    }

    /// Fill `bytes` with `v`, one element after the other in this precision.
    fn fill(self, v: f64, bytes: &mut [u8]) {
        let (f, d) = ((v as f32).to_ne_bytes(), v.to_ne_bytes());
        let element: &[u8] = match self {
            Precision::Float => &f,
            Precision::Double => &d,
        };
        for chunk in bytes.chunks_exact_mut(element.len()) {
            chunk.copy_from_slice(element);
        }
    }

    #[cfg(test)]
    fn encode(self, v: f64, n: usize) -> Vec<u8> {
        let mut bytes = vec![0; n * self.bytes()];
        self.fill(v, &mut bytes);
        bytes
    }

    /// The elements of `bytes`, widened to f64.
    fn decode(self, bytes: &[u8]) -> impl Iterator<Item = f64> + '_ {
        bytes.chunks_exact(self.bytes()).map(move |c| match self {
            Precision::Float => f64::from(f32::from_ne_bytes([c[0], c[1], c[2], c[3]])),
            Precision::Double => {
                f64::from_ne_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
            }
        })
    }

    /// The largest relative error the check allows: each dot partial sums at most
    /// [`DOT_ELEMENTS_PER_EXECUTOR`] products, rounded in the element type.
    fn tolerance(self) -> f64 {
        match self {
            Precision::Float => 1e-4,
            Precision::Double => 1e-10,
        }
    }
}

/// What to run: the element type and the array length (BabelStream's `--float` and `-s`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BabelStreamOptions {
    /// Floats or doubles.
    pub precision: Precision,
    /// Elements per array; fewer where the device cannot hold three such arrays.
    pub elements: usize,
}

impl Default for BabelStreamOptions {
    /// What the calibration runs: 2^25 floats.
    fn default() -> Self {
        BabelStreamOptions {
            precision: Precision::Float,
            elements: BABELSTREAM_ELEMENTS,
        }
    }
}

/// One BabelStream kernel's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BabelStreamKernel {
    /// `Copy`, `Mul`, `Add`, `Triad` or `Dot`, as BabelStream prints them.
    pub name: String,
    /// 10^6 bytes per second from the fastest iteration, host wall time (BabelStream's
    /// measure: launch to completion).
    pub mbytes_per_sec: f64,
    /// The fastest iteration, seconds (wall).
    pub min_seconds: f64,
    /// The slowest.
    pub max_seconds: f64,
    /// The mean.
    pub average_seconds: f64,
    /// 10^6 bytes per second from the fastest of the device-timed iterations by the device's
    /// own timer (the kernel alone, launch overhead excluded).
    pub device_mbytes_per_sec: f64,
}

/// BabelStream's five kernels at the memory level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BabelStream {
    /// Elements per array.
    pub elements: usize,
    /// The element type (floats in files written before doubles were offered).
    #[serde(default)]
    pub precision: Precision,
    /// Iterations of the five kernels.
    pub iterations: usize,
    /// Executors launched.
    pub executors: usize,
    /// Copy, Mul, Add, Triad, Dot.
    pub kernels: Vec<BabelStreamKernel>,
    /// The largest relative difference of the arrays and the dot product from the host's
    /// recurrence.
    pub max_rel_error: f64,
}

impl BabelStream {
    /// Bytes triad moves in one launch: two arrays read, one written.
    pub fn triad_bytes(&self) -> f64 {
        (3 * self.elements * self.precision.bytes()) as f64
    }
}

/// The host's copy of BabelStream's arrays after `iterations` of the five kernels, computed
/// in the element type, and the product a·b each dot term adds.
fn babelstream_gold(iterations: usize, precision: Precision) -> ([f64; 3], f64) {
    let round = |v: f64| match precision {
        Precision::Float => f64::from(v as f32),
        Precision::Double => v,
    };
    let [mut a, mut b, mut c] = INIT.map(round);
    let s = round(SCALAR);
    for _ in 0..iterations {
        c = a;
        b = round(s * c);
        c = round(a + b);
        a = round(b + round(s * c));
    }
    ([a, b, c], round(a * b))
}

/// The first `bytes.len()` bytes of `buf`, read back into `bytes` (a buffer the caller
/// reuses: the arrays are hundreds of MB, and every fresh one costs the OS's page faults).
fn download_into<'b>(
    ctx: &BenchContext<'_>,
    buf: &Buffer,
    bytes: &'b mut [u8],
) -> Result<&'b [u8], BenchError> {
    ctx.device.download(buf, bytes)?;
    Ok(bytes)
}

/// BabelStream's five kernels at the memory level in floats, 2^25 per array: what the
/// calibration runs.
pub fn measure_babelstream(ctx: &mut BenchContext<'_>) -> Result<BabelStream, BenchError> {
    measure_babelstream_with(ctx, &BabelStreamOptions::default())
}

/// BabelStream's five kernels at the memory level as `options` ask, verified.
pub fn measure_babelstream_with(
    ctx: &mut BenchContext<'_>,
    options: &BabelStreamOptions,
) -> Result<BabelStream, BenchError> {
    let precision = options.precision;
    let fp64;
    let program: &Program = match precision {
        Precision::Float => &ctx.program,
        Precision::Double => {
            fp64 = ctx.device.compile(&fp64_program())?;
            &fp64
        }
    };
    let info = ctx.device.info();
    // The three arrays take at most 3/16 of the device's memory (on the host backend the
    // device is the machine's memory, which also holds a staging copy and the check's).
    // The host holds a copy of each array as it uploads it: what the process may still
    // allocate bounds it too (a limit of `ulimit -v` included).
    let host = crate::backend::host::available_memory_bytes().unwrap_or(u64::MAX);
    let fit = (info.max_alloc_bytes / precision.bytes() as u64)
        .min(info.memory_bytes.max(1) / (16 * precision.bytes() as u64))
        .min(host / (16 * precision.bytes() as u64))
        .max(1 << 16) as usize;
    let most = options.elements.max(1).min(fit);
    let (iterations, device_timed) = if ctx.quick {
        (QUICK_ITERATIONS, QUICK_DEVICE_TIMED_ITERATIONS)
    } else {
        (ITERATIONS, DEVICE_TIMED_ITERATIONS)
    };
    // dot: many executors, so each partial sums few products and the rounding of the
    // partials stays far below the check's tolerance (the host adds the partials in f64).
    // copy, mul, add and triad as BabelStream launches them: one element per executor, in
    // work-groups as large as the runtime would choose on a CPU (BabelStream leaves the
    // local size to the runtime), the usual size on a GPU.
    let group = if blocked(ctx) == 1 {
        info.max_group_size.clamp(1, 4096)
    } else {
        ctx.group()
    };
    // The kernels have no bounds check (as BabelStream's): the arrays hold a whole number of
    // work-groups and the launch covers them exactly.
    let n = (most / group).max(1) * group;
    let executors = n;
    let launch = Launch::linear(executors, group);
    let dot_executors = (n / DOT_ELEMENTS_PER_EXECUTOR).max(1).div_ceil(ctx.group()) * ctx.group();
    let dot_launch = Launch::linear(dot_executors, ctx.group());
    // One host staging array for the three uploads and the check's downloads.
    let mut staging = vec![0u8; n * precision.bytes()];
    let mut bufs = Vec::new();
    for v in INIT {
        let buf = ctx.device.alloc(staging.len())?;
        precision.fill(v, &mut staging);
        ctx.device.upload(&buf, &staging)?;
        bufs.push(buf);
    }
    let mut partials = vec![0u8; dot_executors * precision.bytes()];
    let partial = ctx.device.alloc(dot_executors * precision.bytes())?;
    let (a, b, c) = (&bufs[0], &bufs[1], &bufs[2]);
    let nn = n as u32;
    let dot_blocked = Arg::U32(blocked(ctx));
    let names = ["Copy", "Mul", "Add", "Triad", "Dot"];
    // BabelStream's order within an iteration, each kernel with its launch and arguments.
    let calls: [(String, &Launch, Vec<Arg<'_>>); 5] = [
        (
            precision.kernel("copy"),
            &launch,
            vec![Arg::Buf(a), Arg::Buf(c)],
        ),
        (
            precision.kernel("mul"),
            &launch,
            vec![Arg::Buf(b), Arg::Buf(c), precision.scalar(SCALAR)],
        ),
        (
            precision.kernel("add"),
            &launch,
            vec![Arg::Buf(a), Arg::Buf(b), Arg::Buf(c)],
        ),
        (
            precision.kernel("triad"),
            &launch,
            vec![
                Arg::Buf(a),
                Arg::Buf(b),
                Arg::Buf(c),
                precision.scalar(SCALAR),
            ],
        ),
        (
            precision.kernel("dot"),
            &dot_launch,
            vec![
                Arg::Buf(a),
                Arg::Buf(b),
                Arg::U32(nn),
                dot_blocked,
                Arg::Buf(&partial),
            ],
        ),
    ];
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); 5];
    let mut device_times: Vec<Vec<f64>> = vec![Vec::new(); 5];
    let mut dot = 0.0f64;
    ctx.progress.set_message("BabelStream".to_string());
    for iteration in 0..iterations {
        for (k, (kernel, launch, args)) in calls.iter().enumerate() {
            if iteration < device_timed {
                let (device, wall) = ctx.launch_timed_both_in(program, kernel, launch, args)?;
                device_times[k].push(device.0);
                times[k].push(wall.0);
            } else {
                times[k].push(ctx.launch_wall_in(program, kernel, launch, args)?.0);
            }
        }
        dot = precision
            .decode(download_into(ctx, &partial, &mut partials)?)
            .sum();
    }
    ctx.progress.inc(1);
    let ([ga, gb, gc], g_ab) = babelstream_gold(iterations, precision);
    let mut worst = 0.0f64;
    for (buf, gold) in [(a, ga), (b, gb), (c, gc)] {
        for v in precision.decode(download_into(ctx, buf, &mut staging)?) {
            worst = worst.max((v - gold).abs() / gold.abs().max(1e-30));
        }
    }
    let gold_dot = g_ab * n as f64;
    worst = worst.max((dot - gold_dot).abs() / gold_dot.abs().max(1e-30));
    verify(worst < precision.tolerance(), "BabelStream kernels", || {
        format!(
            "largest relative error {worst:e} in {} (allowed {:e})",
            precision.plural(),
            precision.tolerance()
        )
    })?;
    let bytes = [2usize, 2, 3, 3, 2].map(|arrays| (arrays * precision.bytes() * n) as f64);
    // BabelStream leaves the first iteration out of its statistics.
    let skip_first =
        |t: &[f64]| -> Vec<f64> { t.get(1..).filter(|r| !r.is_empty()).unwrap_or(t).to_vec() };
    let kernels = names
        .iter()
        .zip(times.iter().zip(&device_times))
        .zip(bytes)
        .map(|((name, (wall, device)), bytes)| {
            let t = skip_first(wall);
            let min = t.iter().copied().fold(f64::INFINITY, f64::min);
            let max = t.iter().copied().fold(0.0, f64::max);
            let device_min = skip_first(device).into_iter().fold(f64::INFINITY, f64::min);
            BabelStreamKernel {
                name: name.to_string(),
                mbytes_per_sec: 1e-6 * bytes / min,
                min_seconds: min,
                max_seconds: max,
                average_seconds: t.iter().sum::<f64>() / t.len() as f64,
                device_mbytes_per_sec: 1e-6 * bytes / device_min,
            }
        })
        .collect();
    Ok(BabelStream {
        elements: n,
        precision,
        iterations,
        executors,
        kernels,
        max_rel_error: worst,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gold_recurrence_is_babelstreams() {
        // One iteration from a = 0.1, b = 0.2, c = 0: c = 0.1, b = 0.04, c = 0.14,
        // a = 0.04 + 0.4·0.14 = 0.096.
        for precision in [Precision::Float, Precision::Double] {
            let ([a, b, c], ab) = babelstream_gold(1, precision);
            assert!((a - 0.096).abs() < 1e-7 && (b - 0.04).abs() < 1e-7 && (c - 0.14).abs() < 1e-7);
            assert!((ab - 0.096 * 0.04).abs() < 1e-9);
        }
        // Floats round at every step, doubles hardly: after 100 iterations they differ.
        let (f, _) = babelstream_gold(100, Precision::Float);
        let (d, _) = babelstream_gold(100, Precision::Double);
        assert!(f[0] != d[0] && ((f[0] - d[0]) / d[0]).abs() < 1e-5);
    }

    #[test]
    fn elements_round_trip_in_their_precision() {
        for precision in [Precision::Float, Precision::Double] {
            let bytes = precision.encode(0.1, 3);
            assert_eq!(bytes.len(), 3 * precision.bytes());
            let back: Vec<f64> = precision.decode(&bytes).collect();
            assert_eq!(back.len(), 3);
            let want = match precision {
                Precision::Float => f64::from(0.1f32),
                Precision::Double => 0.1,
            };
            assert!(back.iter().all(|&v| v == want));
        }
    }

    #[test]
    fn files_without_a_precision_read_as_floats_and_triad_counts_its_bytes() {
        let json = r#"{"elements": 1024, "iterations": 2, "executors": 1024,
                      "kernels": [], "max_rel_error": 0.0}"#;
        let bs: BabelStream = serde_json::from_str(json).unwrap();
        assert_eq!(bs.precision, Precision::Float);
        assert_eq!(bs.triad_bytes(), 3.0 * 1024.0 * 4.0);
        let doubles = BabelStream {
            precision: Precision::Double,
            ..bs
        };
        assert_eq!(doubles.triad_bytes(), 3.0 * 1024.0 * 8.0);
    }
}
