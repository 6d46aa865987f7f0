//! The real distributed runs under `mpirun` (the `mpi` feature): verified results, the
//! measured report in the prediction's schema, the network file, and bad starts.
//! Without the feature every test here shows as ignored with the command that runs it;
//! `.ci/run` builds the feature and runs them.

mod common;

use common::one_error_line;

fn mpirun(np: usize) -> std::process::Command {
    let mut c = std::process::Command::new("mpirun");
    c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .args(["-np", &np.to_string(), env!("CARGO_BIN_EXE_harness")]);
    c
}

#[test]
#[cfg_attr(
    not(feature = "mpi"),
    ignore = "needs OpenMPI and the mpi feature: cargo test --features mpi --test mpi"
)]
fn two_and_four_ranks_run_verified_and_report_in_the_prediction_schema() {
    let dir = tempfile::tempdir().unwrap();
    for (np, grid, workload) in [
        (2, "2", "jacobi2d"),
        (2, "1x2", "sor-rb"),
        (4, "2x2", "sor-rb"),
        (4, "2x2", "jacobi2d"),
    ] {
        let stem = dir.path().join(format!("{workload}-{np}"));
        let out = mpirun(np)
            .args([
                "mpi-run", workload, "-n", "66", "--iters", "5", "--grid", grid, "--json",
                "--output",
            ])
            .arg(&stem)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["kind"], "measured");
        assert_eq!(v["processors"], np);
        assert!(v["source"].as_str().unwrap().contains("verified"));
        let root = &v["intervals"][0];
        assert_eq!(v["intervals"][1]["executions"], 5);
        v["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .for_each(common::assert_losses_add_up);
        let shadows = if workload == "jacobi2d" { 5 } else { 10 };
        assert_eq!(root["shadow_operations"], shadows);
        assert!(
            stem.with_extension("html").exists()
                || dir.path().join(format!("{workload}-{np}.html")).exists()
        );
    }
}

#[test]
#[cfg_attr(
    not(feature = "mpi"),
    ignore = "needs OpenMPI and the mpi feature: cargo test --features mpi --test mpi"
)]
fn the_pingpong_writes_a_network_file_predict_cluster_reads() {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("net.toml");
    let out = mpirun(2)
        .args(["mpi-pingpong", "--repeats", "10", "--output"])
        .arg(&net)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&net).unwrap();
    let parsed = harness::model::cluster::Network::from_toml(&text).unwrap();
    assert!(parsed.start.0 > 0.0 && parsed.start.0 < 1e-3, "{text}");
}

#[test]
#[cfg_attr(
    not(feature = "mpi"),
    ignore = "needs OpenMPI and the mpi feature: cargo test --features mpi --test mpi"
)]
fn bad_starts_are_one_line() {
    // Not under mpirun.
    let out = common::harness()
        .args(["mpi-run", "jacobi2d", "-n", "66"])
        .output()
        .unwrap();
    assert!(one_error_line(&out).contains("mpirun"));
    // A grid of another size than the ranks; a grid that does not divide: one line in all.
    for (n, grid, output, needle) in [
        ("66", "2x2", "x", "ranks"),
        ("67", "2", "x", "does not divide"),
        ("66", "2", "/proc/no-such-dir/m", "cannot write into"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = mpirun(2)
            .current_dir(dir.path())
            .args([
                "mpi-run", "jacobi2d", "-n", n, "--grid", grid, "--output", output,
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert!(!out.status.success());
        assert_eq!(errors.len(), 1, "{stderr}");
        assert!(errors[0].contains(needle), "{stderr}");
    }
}
