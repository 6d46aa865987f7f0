//! The prediction's accuracy on the kernel ports (kernels/ports/), as a test: the stored
//! validations of each half of `kernels/ports/SPLIT.md` (development and held-out, in the
//! batches it lists), measured on each device by `scripts/ports-baseline.sh`, are assessed again with
//! the current model and the device's stored calibration, no device needed. The test prints each half's table (run
//! it with `cargo test --test accuracy -- --nocapture`) and fails when the `calibrated`
//! variant's median or max |error| on a half passes its limit, or when it predicts fewer cases.
//!
//! The limits are the figures the current model reaches on these stored series, rounded up:
//! they guard against a change that makes the predictions worse, and are lowered when a change
//! makes them better. They are not the targets (issue 59's are median ≤ 15 %, max ≤ 40 % on
//! the held-out half); the README's accuracy table reports both.
//!
//! It also derives the model's own error again (`fit::model_error`): the development halves'
//! split-conformal quantile, which must match `MODEL_ERROR` to its two decimals, and prints
//! how often the widened intervals held on each kind of half.

mod common;

use common::harness;
use harness::fit::model_error::{conformal_quantile, model_error_needed, MODEL_ERROR};
use std::path::{Path, PathBuf};

/// One half's limits: the `calibrated` median and max |error| in percent, and the fewest
/// cases it must predict.
struct Limits {
    half: &'static str,
    median: f64,
    max: f64,
    predicted: u64,
}

/// One device's stored series of one batch of ports: the fixtures' folder, the calibration
/// they are assessed with (`<calibration>.json` beside the folders), the device's name in the
/// stored files, and each measured half's limits.
struct DeviceSet {
    folder: &'static str,
    calibration: &'static str,
    device: &'static str,
    /// Which measurement of those halves this is, for the pooled lines: empty for the first,
    /// else what tells a rerun's cases from the first measurement's (they are never pooled).
    run: &'static str,
    halves: &'static [Limits],
}

const fn limits(half: &'static str, median: f64, max: f64, predicted: u64) -> Limits {
    Limits {
        half,
        median,
        max,
        predicted,
    }
}

/// The stored series, each measured by `scripts/ports-baseline.sh`. Each comment gives its
/// series' figures as stored and after the model changes it names, until 2026-12-02, when a
/// spec's uploads began to move by the transfer sweep; the limits are the figures since,
/// rounded up (the test prints them).
const SETS: [DeviceSet; 19] = [
    // PoCL 3.1 on a 2-core AMD EPYC VM (PoCL names its CPU haswell), 2026-11-29, before flops
    // were declared. Until 2026-12-02: development 26.4 %, 98.1 %, 8 of 8; held-out 22.8 %,
    // 59.9 %, 8 of 8.
    DeviceSet {
        folder: "opencl-pthread-haswell-amd-epyc",
        calibration: "opencl-pthread-haswell-amd-epyc",
        device: "opencl-pthread-haswell-amd-epyc",
        run: "",
        halves: &[
            limits("development", 27.0, 98.5, 8),
            limits("held-out", 23.5, 60.0, 8),
        ],
    },
    // PoCL 3.1 on another 2-core AMD EPYC VM (skylake-avx512), 2026-11-29 evening, with three
    // cold runs per size (each kernel phase of a size moved to device memory by them). Until
    // 2026-12-02: development 5.6 %, 49.6 %, 8 of 8; held-out 17.9 %, 54.9 %, 8 of 8 (16.9 %
    // before a phase that waits on memory at the target stopped counting as compute-bound:
    // hotspot).
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-amd-epyc",
        calibration: "opencl-pthread-skylake-avx512-amd-epyc",
        device: "opencl-pthread-skylake-avx512-amd-epyc",
        run: "",
        halves: &[
            limits("development", 5.0, 50.0, 8),
            limits("held-out", 18.0, 55.0, 8),
        ],
    },
    // The second batch (SPLIT.md), the same kind of VM, 2026-11-30, with cold runs; its first
    // measurement after the split was frozen. Until 2026-12-02: development 7.9 %, 8.8 %, 4 of
    // 4; held-out 23.9 %, 340.0 %, 4 of 4 (kmeans: the window's two powers of two alias in the
    // caches, and the target is one).
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-amd-epyc-batch2",
        calibration: "opencl-pthread-skylake-avx512-amd-epyc-batch2",
        device: "opencl-pthread-skylake-avx512-amd-epyc",
        run: "",
        halves: &[
            limits("development-2", 8.0, 9.0, 4),
            limits("held-out-2", 24.5, 340.0, 4),
        ],
    },
    // The third batch (SPLIT.md), the same kind of VM, 2026-11-30, with cold runs, 1-D sizes
    // off powers of two and the cold runs' eviction at each sweep's first launch; its first
    // measurement, after the rules it judges were committed. Until 2026-12-02: development 11.7
    // %, 38.1 %, 4 of 4 (19.6 % before the target's amounts were taken from the spec: lud;
    // 50.1 % max before a phase that waits on memory at the target stopped counting as
    // compute-bound: mg-resid); held-out 2.0 %, 27.5 %, 4 of 4.
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-amd-epyc-batch3",
        calibration: "opencl-pthread-skylake-avx512-amd-epyc-batch3",
        device: "opencl-pthread-skylake-avx512-amd-epyc",
        run: "",
        halves: &[
            limits("development-3", 12.0, 38.5, 4),
            limits("held-out-3", 2.0, 28.0, 4),
        ],
    },
    // The fourth batch (SPLIT.md), the same kind of VM, 2026-11-30, its first measurement,
    // after the target's amounts were taken from the spec. tpacf (held-out) is not run (its
    // N² pairs past the L3 are out of reach), so that half has three cases. Until 2026-12-02:
    // development 7.6 %, 16.6 %, 4 of 4; held-out 18.7 %, 121.5 %, 3 of 3 (30.2 % and 55.0 %,
    // 119.6 % before a phase that waits on memory at the target stopped counting as
    // compute-bound: minighost, mg-psinv, dwt2d).
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-amd-epyc-batch4",
        calibration: "opencl-pthread-skylake-avx512-amd-epyc-batch4",
        device: "opencl-pthread-skylake-avx512-amd-epyc",
        run: "",
        halves: &[
            limits("development-4", 7.5, 17.0, 4),
            limits("held-out-4", 19.0, 121.5, 3),
        ],
    },
    // The fifth batch (SPLIT.md), the same VM and calibration as the fourth's, 2026-11-30. Its
    // held-out half was the reserve, first measured after a phase that waits on memory at the
    // target stopped counting as compute-bound. Until 2026-12-02: development 24.5 %, 46.9 %, 4
    // of 4; held-out 22.3 %, 164.8 %, 4 of 4 (77.0 % max without that rule: hpcg-spmv).
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-amd-epyc-batch5",
        calibration: "opencl-pthread-skylake-avx512-amd-epyc-batch4",
        device: "opencl-pthread-skylake-avx512-amd-epyc",
        run: "",
        halves: &[
            limits("development-5", 25.0, 47.5, 4),
            limits("held-out-5", 22.5, 165.0, 4),
        ],
    },
    // The sixth batch's development half (SPLIT.md), the same VM and calibration as the
    // fourth's, 2026-11-30, measured after its ports were committed. Its held-out half is the
    // reserve, not measured until a rule it is to judge is committed. Until 2026-12-02:
    // development 8.0 %, 43.6 %, 4 of 4 (hpgmg-jacobi).
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-amd-epyc-batch6",
        calibration: "opencl-pthread-skylake-avx512-amd-epyc-batch4",
        device: "opencl-pthread-skylake-avx512-amd-epyc",
        run: "",
        halves: &[limits("development-6", 8.5, 44.0, 4)],
    },
    // PoCL 3.1 on a 2-core Intel Xeon VM (48 MiB L3), 2026-11-30: the five measured held-out
    // halves on a device no rule was designed on, measured once with the model as it stood (its
    // calibration made after the sampling's drift stop). Until 2026-12-02: held-out 30.6 %,
    // 71.2 % (hotspot); held-out-2 5.2 %, 27.1 %; held-out-3 18.9 %, 61.7 % (cfd); held-out-4
    // 17.5 %, 20.8 % (tpacf not run); held-out-5 6.0 %, 95.5 % (hpcg-spmv); all 23 cases
    // predicted. Then, with the same calibration and model, the six development halves:
    // development 8.6 %, 92.7 % (sgemm, 228 s at its target); development-2 8.0 %, 16.6 %;
    // development-3 5.8 %, 25.2 % (spmv-ell); development-4 14.8 %, 27.7 % (cutcp);
    // development-5 43.6 %, 125.9 % (clover-idealgas); development-6 20.7 %, 39.0 %
    // (hpccg-sparsemv); all 28 predicted. spmv-csr, spmv-ell and is-rank were measured again
    // with the same calibration once their specs declared their gathers (2026-11-30, after the
    // declared gathers' move was committed): development 8.6 %, 92.7 % (spmv-csr −21.7 %,
    // 42.8 % without the move); development-3 5.8 %, 7.5 %; development-4 16.5 %, 27.7 % (is-rank
    // −11.5 %, 16.7 % without the move). The seventh batch's pair, ported with their gathers
    // declared after the move was committed, measured once with the same calibration:
    // held-out-7 spmv-jds +20.7 % (+8.0 % without the move; a rerun, not stored: −0.8 % and
    // −14.7 %); development-7 cg-spmv −24.2 % (−28.0 %). The eighth batch, ported with their
    // gathers declared, measured once with the same calibration: held-out-8 color-max −6.6 %
    // (−54.6 % without the move), spmv-csr-vector −19.2 % (−20.0 %; a rerun, not stored:
    // −19.5 % and −57.1 %, −14.5 % and −15.1 %); development-8 sell-spmv +1.8 % (−13.6 %), sssp-relax
    // −17.0 % (−39.2 %). The sixth batch's held-out half, the reserve, first measured with the
    // same calibration once the model had the gathers' move (pagerank declaring its gathers,
    // before it ran): held-out-6 39.7 %, 57.4 % (mg-interp +57.4 %, clover-accelerate +55.8 %,
    // pagerank +23.6 %, −18.6 % without the move, sad +3.0 %). The ninth batch's development
    // half, ported and measured the same evening with the same calibration: development-9 4.8
    // %, 37.2 % (bsearch −37.2 %, minighost-27pt +7.7 %, mis −1.9 %, tealeaf-jacobi −1.6 %);
    // its held-out half is the reserve. Once the declared searches' move was committed
    // (designed on bsearch and xsbench), bsearch and xsbench were measured again declaring
    // their searches, with the same calibration: development-9 2.3 %, 7.7 % (bsearch −2.8 %,
    // −42.7 % without the move); development-5 34.2 %, 125.9 % (xsbench −20.5 %, −44.6 %
    // without). Then the ninth batch's reserve, btree-range declaring its search before it ran:
    // held-out-9 13.4 %, 51.8 % (clover-flux +51.8 %, bc-backtrack −21.5 %, tealeaf3d-jacobi
    // +5.2 %, btree-range −0.2 %, −41.5 % without the move). The tenth batch's development
    // half, ported and measured the same night with the same calibration: development-10 41.5
    // %, 74.6 % (fdtd3d +74.6 %, clover-reset +55.2 %, histo-range −27.8 %, transpose-naive
    // +0.7 %); its held-out half is the reserve.
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-intel-xeon",
        calibration: "opencl-pthread-skylake-avx512-intel-xeon",
        device: "opencl-pthread-skylake-avx512-intel-r-xeon-r-processor-2-80ghz",
        run: "",
        halves: &[
            limits("held-out", 30.0, 71.0, 8),
            limits("held-out-2", 5.5, 25.0, 4),
            limits("held-out-3", 19.0, 62.0, 4),
            limits("held-out-4", 19.5, 21.5, 3),
            limits("held-out-5", 6.5, 95.0, 4),
            limits("development", 9.5, 93.0, 8),
            limits("development-2", 8.5, 15.5, 4),
            limits("development-3", 5.0, 7.0, 4),
            limits("development-4", 17.5, 28.0, 4),
            limits("development-5", 33.0, 125.0, 4),
            limits("development-6", 20.0, 39.5, 4),
            limits("held-out-7", 18.0, 18.0, 1),
            limits("development-7", 32.0, 32.0, 1),
            limits("held-out-8", 14.0, 20.0, 2),
            limits("held-out-6", 39.0, 56.0, 4),
            limits("development-9", 3.0, 7.5, 4),
            limits("development-8", 10.0, 18.5, 2),
            limits("held-out-9", 14.0, 51.0, 4),
            limits("development-10", 41.5, 75.0, 4),
        ],
    },
    // The same Intel Xeon VM and calibration, 2026-12-01: development halves 2–10 measured a
    // second time with the model unchanged (`scripts/ports-baseline.sh --half development-K`),
    // to show how far a stored half's figures move between two runs on this VM. Kept beside the
    // first measurement, not in its place, and pooled apart. The first development half
    // (sgemm's target alone runs minutes) was not run again. Until 2026-12-02: the 31 cases
    // 9.8 % median, 43.0 % max (clover-reset), against 11.9 % and 125.9 % in their first
    // measurement; case by case the two runs differ by 10 points at the median, 100 at most
    // (clover-idealgas +125.9 → +25.7 %, fdtd3d +74.6 → +5.0 %).
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-intel-xeon-rerun",
        calibration: "opencl-pthread-skylake-avx512-intel-xeon",
        device: "opencl-pthread-skylake-avx512-intel-r-xeon-r-processor-2-80ghz",
        run: ", measured again 2026-12-01",
        halves: &[
            limits("development-2", 9.5, 14.0, 4),
            limits("development-3", 9.5, 23.0, 4),
            limits("development-4", 11.0, 17.5, 4),
            limits("development-5", 6.0, 25.0, 4),
            limits("development-6", 8.5, 34.5, 4),
            limits("development-7", 31.5, 31.5, 1),
            limits("development-8", 7.0, 10.5, 2),
            limits("development-9", 11.0, 15.0, 4),
            limits("development-10", 18.5, 45.5, 4),
        ],
    },
    // The same Intel Xeon VM, 2026-12-01 evening, with a calibration that has the page walk
    // sweep (the OS reporting a 480 MiB L3 that day): the first development half's sgemm
    // measured again declaring its walks, in sample (the walks rule was designed on it), at the
    // first measurement's sizes. Until 2026-12-02: sgemm −5.9 % (−92.7 % in the first
    // measurement, without the sweep; `paper` −91.2 %). Then, with the same calibration, the
    // eleventh batch's one held-out kernel, named after the rule was committed and measured
    // once (`scripts/ports-baseline.sh --half held-out-11`): gemv-n −59.1 % (−69.8 % without
    // the move; `paper` +452.6 %).
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-intel-xeon-walks",
        calibration: "opencl-pthread-skylake-avx512-intel-xeon-walks",
        device: "opencl-pthread-skylake-avx512-intel-r-xeon-r-processor",
        run: ", with the page walk sweep",
        halves: &[
            limits("development", 6.0, 6.0, 1),
            limits("held-out-11", 61.0, 61.0, 1),
        ],
    },
    // The same Intel Xeon VM, 2026-12-01 afternoon, with a calibration whose page walk sweep
    // has the aliased curve (walks exactly a page apart; stored without its raw samples,
    // which no prediction reads): the first development half's sgemm at N = 1024 (a stride
    // of one page) from its odd window, in sample (the aliasing rule was designed on it):
    // −11.7 % (−63.2 % on the plain curve; `paper` −85.8 %). Then the twelfth batch's
    // held-out case, frozen before the rule was written and measured once: gemv-n at
    // N = 4096 (a 16 KiB stride), +24.6 % (+20.5 % on the plain curve; `paper` +0.7 %).
    // And the thirteenth batch's two held-out grid-stride kernels, which declare their loops
    // as walks as docs/spec-format.md advises, ported and measured once after that advice
    // (`validate-suite --workloads`): stream-dot −51.8 % (−59.2 % without the walks),
    // gridstride-saxpy −12.5 % (−15.4 %); `paper` −27.9 and −25.3 %.
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-intel-xeon-aliased",
        calibration: "opencl-pthread-skylake-avx512-intel-xeon-aliased",
        device: "opencl-pthread-skylake-avx512-intel-r-xeon-r-processor",
        run: ", with the aliased walk curve",
        halves: &[
            limits("development", 12.0, 12.0, 1),
            limits("held-out-12", 24.5, 24.5, 1),
            limits("held-out-13", 33.5, 53.0, 2),
        ],
    },
    // The same Intel Xeon VM, 2026-12-01 evening, with a full calibration made just before
    // (stored without its raw samples, which no prediction reads): the fourteenth batch's
    // two held-out row kernels from HeCBench, frozen before they were ported and measured
    // once (`validate-suite --workloads`, 3.1 min) with the model as it stood (b6ef3458):
    // softmax +2.3 %, layernorm +0.5 %; `paper` −2.8 and +3.0 %. Then, with the same
    // calibration, the fifteenth batch's two held-out kernels, frozen before they were ported
    // (19.6 min): adam +0.2 % (`paper` +1.4 %), compute-bound on PoCL after all;
    // dense-embedding −65.6 % (`paper` −53.7 %; the same without its declared walks, which
    // add nothing), whose target ran 2.5 times as long per byte as its window, in every run
    // (SPLIT.md, "The fifteenth batch").
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-intel-xeon-rows",
        calibration: "opencl-pthread-skylake-avx512-intel-xeon-rows",
        device: "opencl-pthread-skylake-avx512-intel-r-xeon-r-processor",
        run: ", the row kernels' calibration",
        halves: &[
            limits("held-out-14", 2.0, 2.5, 2),
            limits("held-out-15", 33.5, 66.5, 2),
        ],
    },
    // The same kind of Intel Xeon VM whose OS reports a 480 MiB L3 (targets about 1 GB, cold
    // runs by flushing the launch's own buffers), 2026-12-01 night, a full calibration made
    // just before (stored without its raw samples): the held-out halves of batches 1–9, each
    // measured on the 2.80 GHz VM above and never on this one, run once with the model as at
    // aaf90e9e (`scripts/ports-baseline.sh --half held-out-K --verify smallest`; from the
    // second half on, a binary that fills spec buffers faster, the same data bit for bit).
    // Until 2026-12-02: the 34 cases 13.3 % median, 100.3 % max (pagerank +100.3 %, hpcg-spmv
    // +70.9 %, reduction −52.8 %, scan −49.3 %); `paper` 18.3 %, 69.9 %.
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-intel-xeon-480",
        calibration: "opencl-pthread-skylake-avx512-intel-xeon-480",
        device: "opencl-pthread-skylake-avx512-intel-r-xeon-r-processor",
        run: ", the OS reporting a 480 MiB L3",
        halves: &[
            limits("held-out", 17.0, 51.5, 8),
            limits("held-out-2", 4.5, 53.0, 4),
            limits("held-out-3", 16.5, 37.5, 4),
            limits("held-out-4", 25.5, 30.0, 3),
            limits("held-out-5", 2.5, 24.5, 4),
            limits("held-out-6", 6.5, 85.0, 4),
            limits("held-out-7", 19.0, 19.0, 1),
            limits("held-out-8", 10.5, 10.5, 2),
            limits("held-out-9", 9.5, 14.0, 4),
        ],
    },
    // The same kind of VM, 2026-12-02, a full calibration made just before: the development
    // gathers of batches 7 and 8 (cg-spmv, sell-spmv, sssp-relax), to see on development
    // kernels whether declared gathers over-charge here as the held-out ones did: cg-spmv
    // +44.5 % (`paper` +18.8 %), sell-spmv +9.5 %, sssp-relax +8.6 %; with the uploads moved
    // by the transfer sweep, +34.4, −1.9 and +5.8 %.
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-intel-xeon-480-gathers",
        calibration: "opencl-pthread-skylake-avx512-intel-xeon-480-gathers",
        device: "opencl-pthread-skylake-avx512-intel-r-xeon-r-processor",
        run: ", the OS reporting a 480 MiB L3",
        halves: &[
            limits("development-7", 34.5, 34.5, 1),
            limits("development-8", 4.0, 6.0, 2),
        ],
    },
    // The same kind of VM, 2026-12-02, a full calibration made just before: the tenth
    // batch's held-out half, the reserve (SPLIT.md), first measured once the model's error,
    // the gathers' overlapped bound and the spec uploads' move were committed (840101ba):
    // tealeaf-residual −6.2 %, laplace3d −29.6 %, merge-path +16.9 %, transpose-tiled
    // −36.2 %; `paper` 14.7 % median, 27.3 % max; Extra-P 43.1 %, 59.2 %.
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-intel-xeon-480-reserve",
        calibration: "opencl-pthread-skylake-avx512-intel-xeon-480-reserve",
        device: "opencl-pthread-skylake-avx512-intel-r-xeon-r-processor",
        run: ", the OS reporting a 480 MiB L3",
        halves: &[limits("held-out-10", 23.5, 36.5, 4)],
    },
    // The same kind of VM, 2026-12-02 (the eleventh session), a full calibration (67.7 s)
    // made just before: development halves measured here for the first time, the tenth
    // batch's (clover-reset −1.3 %, fdtd3d −16.8 %, histo-range −13.4 %, transpose-naive
    // +0.2 %), the third batch's spmv-ell alone (−5.2 %; lud's target is out of reach on this
    // VM) and the sixteenth batch's, ported that morning to develop a rule charging the walks a
    // kernel's source shows (black-scholes −43.9 %, histogram256 −1.8 %; with the rule −40.6
    // and +17.1 %: not kept, docs/decisions.md). Then, 03:48–04:24 with the same calibration
    // and the model unchanged, development halves 5, 6 and 9 (batch 2's lavamd and gaussian
    // and batch 4's cutcp reach targets past 480 MiB only in hours): sp-rhs −19.2 %,
    // hpgmg-jacobi −20.6 %, clover-idealgas +17.3 % (+125.9 % and +25.7 % on the 2.80 GHz
    // VM), bsearch +14.9 %, the other eight within 10 %.
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-intel-xeon-480-dev",
        calibration: "opencl-pthread-skylake-avx512-intel-xeon-480-dev",
        device: "opencl-pthread-skylake-avx512-intel-r-xeon-r-processor",
        run: ", the OS reporting a 480 MiB L3",
        halves: &[
            limits("development-10", 7.5, 17.0, 4),
            limits("development-3", 5.5, 5.5, 1),
            limits("development-16", 23.0, 44.0, 2),
            limits("development-5", 12.0, 19.5, 4),
            limits("development-6", 9.5, 21.0, 4),
            limits("development-9", 6.0, 15.0, 4),
        ],
    },
    // PoCL 3.1 on a 2-core AMD EPYC VM (skylake-avx512, a 32 MiB L3), 2026-12-02, a full
    // calibration (27.7 s) made just before: every half of batches 1–10 and the sixteenth's
    // development half measured again with the model as at 378339a9, no rule pending
    // (`scripts/ports-baseline.sh --half K --verify smallest`; held-out 11:04–11:17,
    // development 11:18–11:48). The first batches' stored series above are an earlier
    // binary's; batches 7–10 and 16 never ran on this kind of VM before.
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-amd-epyc-1202",
        calibration: "opencl-pthread-skylake-avx512-amd-epyc-1202",
        device: "opencl-pthread-skylake-avx512-amd-epyc",
        run: ", measured again 2026-12-02",
        halves: &[
            limits("held-out", 33.0, 78.0, 8),
            limits("held-out-2", 14.5, 41.0, 4),
            limits("held-out-3", 12.5, 21.0, 4),
            limits("held-out-4", 54.0, 61.0, 3),
            limits("held-out-5", 43.5, 725.0, 4),
            limits("held-out-6", 12.0, 79.5, 4),
            limits("held-out-7", 5.0, 5.0, 1),
            limits("held-out-8", 29.0, 49.5, 2),
            limits("held-out-9", 48.0, 199.0, 4),
            limits("held-out-10", 24.5, 61.5, 4),
            limits("development", 21.5, 47.0, 8),
            limits("development-2", 37.5, 68.5, 4),
            limits("development-3", 24.0, 49.5, 4),
            limits("development-4", 21.0, 41.5, 4),
            limits("development-5", 20.0, 44.0, 4),
            limits("development-6", 26.5, 50.0, 4),
            limits("development-7", 39.5, 39.5, 1),
            limits("development-8", 17.0, 21.0, 2),
            limits("development-9", 8.0, 36.5, 4),
            limits("development-10", 16.5, 32.0, 4),
            limits("development-16", 1.0, 1.5, 2),
        ],
    },
    // The same VM that afternoon, with a calibration of its own (32.8 s, 13:38): the
    // seventeenth batch's development half, measured once with the model as at 3b1675ab and
    // the default eviction (15:00; the same half with the caches flushed instead, 14:59,
    // calibrated 35.7 %, 209.4 %, is not stored: SPLIT.md). Pooled with the morning's halves.
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-amd-epyc-1202b",
        calibration: "opencl-pthread-skylake-avx512-amd-epyc-1202b",
        device: "opencl-pthread-skylake-avx512-amd-epyc",
        run: ", measured again 2026-12-02",
        halves: &[limits("development-17", 35.0, 138.0, 4)],
    },
    // The same VM later, with a calibration of its own (41.7 s, 16:09): the one kernel of
    // the seventeenth batch's held-out half that declares gathers, minife-matvec, measured
    // once (16:09, the default eviction, `--verify smallest`) to judge charging gathers at
    // their footprint (not kept: docs/decisions.md). The half's three other kernels stay in
    // reserve, unrun.
    DeviceSet {
        folder: "opencl-pthread-skylake-avx512-amd-epyc-1202c",
        calibration: "opencl-pthread-skylake-avx512-amd-epyc-1202c",
        device: "opencl-pthread-skylake-avx512-amd-epyc",
        run: ", measured again 2026-12-02",
        halves: &[limits("held-out-17", 7.0, 7.0, 1)],
    },
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ports")
}

/// Assess one half again and return its suite summary (the parsed `<device>.suite.json`).
fn reassess(set: &DeviceSet, half: &str, out: &Path) -> serde_json::Value {
    let device = set.device;
    let dir = fixtures().join(set.folder).join(half);
    let run = harness()
        .args(["validate-suite", "--from"])
        .arg(&dir)
        .arg("--calibration")
        .arg(fixtures().join(format!("{}.json", set.calibration)))
        .arg("--output-dir")
        .arg(out.join(half))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{half}: {stderr}");
    let file = out.join(half).join(format!("{device}.suite.json"));
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// What bounds each kernel phase of case `name` in the `calibrated` variant (`phase: regime`),
/// from its validation file in `dir` (the re-assessed suite's folder of cases).
fn regimes(dir: &Path, name: &str) -> Vec<String> {
    let Some(file) = std::fs::read_dir(dir).ok().and_then(|entries| {
        entries.filter_map(Result::ok).map(|e| e.path()).find(|p| {
            p.file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.contains(&format!(".validate.{name}.")))
        })
    }) else {
        return vec!["?".into()];
    };
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["variant"] == "calibrated" && r["phase"] != "total" && r["phase"] != "upload")
        .filter_map(|r| {
            let regime = r["calibrated"]["regime"].as_str()?;
            let phase = r["phase"].as_str()?;
            (regime != "transfer" && regime != "host").then(|| format!("{phase}: {regime}"))
        })
        .collect()
}

/// Each case's |error| in percent by `variant` (`None` where it predicted nothing).
fn case_errors(suite: &serde_json::Value, variant: &str) -> Vec<Option<f64>> {
    suite["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|case| {
            let measured = case["measured_seconds"].as_f64()?;
            let predicted = case["predictions"]
                .as_array()?
                .iter()
                .find(|v| v["variant"] == variant)?["predicted_seconds"]
                .as_f64()?;
            Some(100.0 * (predicted / measured - 1.0).abs())
        })
        .collect()
}

/// Each variant's |errors| over the cases of a pool.
type VariantErrors<'a> = [(&'a str, Vec<Option<f64>>); 2];

/// One line pooling every case of a device's development (or held-out) halves, all batches:
/// the median and max |error| per variant, as issue 59's targets judge the whole set.
fn pooled(label: &str, errors: &VariantErrors) -> String {
    let mut line = format!("{label}:");
    for (variant, e) in errors {
        let mut v: Vec<f64> = e.iter().flatten().copied().collect();
        v.sort_by(f64::total_cmp);
        let median = match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        };
        line.push_str(&format!(
            " {variant} median {median:.1} %, max {:.1} %, {} of {} predicted;",
            v.last().copied().unwrap_or(f64::NAN),
            v.len(),
            e.len()
        ));
    }
    line.pop();
    line
}

/// Each case's `calibrated` prediction beside its measured time: (measured, predicted,
/// interval), where it predicted one with an interval.
fn case_intervals(suite: &serde_json::Value) -> Vec<(f64, f64, [f64; 2])> {
    suite["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|case| {
            let measured = case["measured_seconds"].as_f64()?;
            let p = case["predictions"]
                .as_array()?
                .iter()
                .find(|v| v["variant"] == "calibrated")?;
            let i = p["interval"].as_array()?;
            Some((
                measured,
                p["predicted_seconds"].as_f64()?,
                [i.first()?.as_f64()?, i.get(1)?.as_f64()?],
            ))
        })
        .collect()
}

/// The line on the calibrated intervals of one kind of half: how many held the measured
/// time, and the median factors of their upper and lower ends over the estimate.
fn intervals_line(kind: &str, cases: &[(f64, f64, [f64; 2])]) -> String {
    let held = cases
        .iter()
        .filter(|(m, _, [lo, hi])| lo <= m && m <= hi)
        .count();
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    let up = median(cases.iter().map(|(_, e, i)| i[1] / e).collect());
    let down = median(cases.iter().map(|(_, e, i)| e / i[0]).collect());
    format!(
        "{kind} halves, every device: the calibrated 95 % intervals held {held} of {} ({:.1} %); median interval ×{up:.2} / ÷{down:.2} about the estimate",
        cases.len(),
        100.0 * held as f64 / cases.len().max(1) as f64
    )
}

/// The table of one half: a row per case with each variant's signed error, and the summary.
fn table(device: &str, half: &str, suite: &serde_json::Value, dir: &Path) -> String {
    let mut t = format!(
        "\n{half} ({device})\n| case | measured s | paper | calibrated | kernels bound by |\n"
    );
    t.push_str("| --- | --- | --- | --- | --- |\n");
    for case in suite["cases"].as_array().unwrap() {
        let measured = case["measured_seconds"].as_f64().unwrap_or(f64::NAN);
        let error = |variant: &str| {
            case["predictions"]
                .as_array()
                .and_then(|p| p.iter().find(|v| v["variant"] == variant))
                .and_then(|v| v["predicted_seconds"].as_f64())
                .map_or("none".to_string(), |p| {
                    format!("{:+.1} %", 100.0 * (p / measured - 1.0))
                })
        };
        let name = case["case"].as_str().unwrap_or("?");
        t.push_str(&format!(
            "| {} | {:.4} | {} | {} | {} |\n",
            name,
            measured,
            error("paper"),
            error("calibrated"),
            regimes(dir, name).join(", ")
        ));
    }
    for v in suite["summary"].as_array().unwrap() {
        let percent = |x: &serde_json::Value| {
            x.as_f64()
                .filter(|e| e.is_finite())
                .map_or_else(|| "-".to_string(), |e| format!("{e:.1} %"))
        };
        // How often its 95 % intervals held the measured time, of the cases it predicted.
        let held = v["interval_holds"]
            .as_f64()
            .filter(|h| h.is_finite())
            .zip(v["predicted"].as_f64())
            .map_or_else(|| "-".to_string(), |(h, n)| format!("{:.0} of {n}", h * n));
        t.push_str(&format!(
            "{}: median {}, max {}, {} of {} predicted, interval held in {held}\n",
            v["variant"].as_str().unwrap_or("?"),
            percent(&v["error"]["median"]),
            percent(&v["error"]["max"]),
            v["predicted"],
            v["cases"]
        ));
    }
    t
}

#[test]
fn the_ports_are_predicted_within_their_limits() {
    let out = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    // Per (device, development or held-out): the calibrated and paper |errors| of every case.
    let mut pools: Vec<(String, VariantErrors)> = Vec::new();
    // Per kind of half (development, held-out): every case's calibrated interval.
    let mut intervals: [Vec<(f64, f64, [f64; 2])>; 2] = [Vec::new(), Vec::new()];
    for set in &SETS {
        for limit in set.halves {
            let out = out.path().join(set.folder);
            let suite = reassess(set, limit.half, &out);
            let cases = out.join(limit.half).join(format!("{}.suite", set.device));
            println!("{}", table(set.device, limit.half, &suite, &cases));
            let kind = if limit.half.starts_with("held-out") {
                "held-out"
            } else {
                "development"
            };
            let label = format!("all {kind} halves ({}{})", set.device, set.run);
            let at = match pools.iter().position(|(l, _)| *l == label) {
                Some(at) => at,
                None => {
                    pools.push((label, [("calibrated", Vec::new()), ("paper", Vec::new())]));
                    pools.len() - 1
                }
            };
            intervals[usize::from(kind == "held-out")].extend(case_intervals(&suite));
            for (variant, errors) in pools[at].1.iter_mut() {
                errors.extend(case_errors(&suite, variant));
            }
            let calibrated = suite["summary"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["variant"] == "calibrated")
                .expect("a calibrated row")
                .clone();
            let median = calibrated["error"]["median"]
                .as_f64()
                .unwrap_or(f64::INFINITY);
            let max = calibrated["error"]["max"].as_f64().unwrap_or(f64::INFINITY);
            let predicted = calibrated["predicted"].as_u64().unwrap_or(0);
            if median > limit.median || max > limit.max || predicted < limit.predicted {
                failures.push(format!(
                    "{} {}: calibrated median {median:.1} % (limit {}), max {max:.1} % (limit {}), {predicted} predicted (at least {})",
                    set.folder, limit.half, limit.median, limit.max, limit.predicted
                ));
            }
        }
    }
    println!();
    for (label, errors) in &pools {
        println!("{}", pooled(label, errors));
    }
    // The model's error derived again from the development halves (fit::model_error).
    let scores: Vec<f64> = intervals[0]
        .iter()
        .filter_map(|&(m, e, i)| model_error_needed(m, e, i, MODEL_ERROR))
        .collect();
    let derived = conformal_quantile(&scores, 0.95).unwrap_or(f64::NAN);
    println!(
        "\nthe model's error: the development halves' 95 % conformal quantile is {derived:.4} over {} cases (MODEL_ERROR {MODEL_ERROR})",
        scores.len()
    );
    println!("{}", intervals_line("development", &intervals[0]));
    println!("{}", intervals_line("held-out", &intervals[1]));
    let rounded = (derived * 100.0).ceil() / 100.0;
    if (rounded - MODEL_ERROR).abs() > 0.005 {
        failures.push(format!(
            "MODEL_ERROR is {MODEL_ERROR}, the development halves now give {derived:.4}: set it to {rounded:.2} (fit/model_error.rs)"
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
