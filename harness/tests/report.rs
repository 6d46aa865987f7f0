//! `harness figures` and `harness report` on stored fixtures: deterministic output,
//! every kind of stored result drawn, bad files skipped by name, and the report checked as a
//! reader would see it, in headless Chromium.

mod common;

use std::path::{Path, PathBuf};

use common::{fails_with, harness};

/// Stored results of every kind a figure or a report draws (tests/fixtures/stored/).
fn stored() -> [PathBuf; 1] {
    [Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stored")]
}

fn from_args(dirs: &[PathBuf]) -> Vec<String> {
    dirs.iter()
        .flat_map(|d| ["--from".to_string(), d.display().to_string()])
        .collect()
}

/// Every file under `dir`, relative, sorted, with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                out.push((
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn figures_from_stored_results_are_complete_and_byte_identical() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for out in [a.path(), b.path()] {
        let o = harness()
            .arg("figures")
            .args(from_args(&stored()))
            .args(["--out", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let (ta, tb) = (tree(a.path()), tree(b.path()));
    assert_eq!(
        ta.iter().map(|t| &t.0).collect::<Vec<_>>(),
        tb.iter().map(|t| &t.0).collect::<Vec<_>>()
    );
    for (x, y) in ta.iter().zip(&tb) {
        assert!(x.1 == y.1, "{} differs between two runs", x.0.display());
    }
    let names: Vec<String> = ta.iter().map(|t| t.0.display().to_string()).collect();
    // Every figure kind the stored results hold, each as SVG, PNG and CSV.
    for kind in [
        ".latency.",
        ".bandwidth.",
        ".gaps.",
        ".fit.",
        ".polynomial.",
        ".fractal.parity.",
        ".fractal.errors.",
        ".suite.errors.",
        ".maxplus.triad.figure.",
        ".balance.sor-512.model.",
        ".balance.sor-512.splits.",
        ".predicted.losses.",
    ] {
        for ext in ["svg", "png", "csv"] {
            assert!(
                names
                    .iter()
                    .any(|n| n.contains(kind) && n.ends_with(&format!(".{ext}"))),
                "no {kind}{ext} among {} files",
                names.len()
            );
        }
    }
    // PNGs at print resolution: 8.5 cm at 300 dpi is 1004 px.
    let png = ta
        .iter()
        .find(|t| t.0.extension().unwrap() == "png")
        .unwrap();
    let image = image::load_from_memory(&png.1).unwrap();
    assert!(image.width() >= 1004, "{} px", image.width());
}

#[test]
fn bad_files_are_skipped_by_name_and_the_report_says_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/calibration-host.json");
    let good = std::fs::read_to_string(fixture).unwrap();
    std::fs::write(dir.path().join("good.json"), &good).unwrap();
    std::fs::write(dir.path().join("partial.json"), &good[..good.len() / 2]).unwrap();
    std::fs::write(dir.path().join("garbage.json"), "not json at all").unwrap();
    // A validation of an older format: its rows lack fields this version needs.
    std::fs::write(
        dir.path().join("old.validate.json"),
        r#"{"series": {}, "rows": [], "large": []}"#,
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = harness()
        .args(["figures", "--from", dir.path().to_str().unwrap()])
        .args(["--out", out.path().to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    for name in ["partial.json", "garbage.json", "old.validate.json"] {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("skipped ") && l.contains(name)),
            "{name}: {stderr}"
        );
    }
    assert!(!stderr.contains("panicked"));
    // The good calibration's figures are there.
    let files = tree(out.path());
    assert!(files
        .iter()
        .any(|f| f.0.to_string_lossy().ends_with("good.latency.svg")));

    let pages = tempfile::tempdir().unwrap();
    let o = harness()
        .args(["report", "--from", dir.path().to_str().unwrap()])
        .args(["--out", pages.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let index = std::fs::read_to_string(pages.path().join("index.html")).unwrap();
    assert!(index.contains("Files skipped") && index.contains("partial.json"));
    let slug = "host-intel-r-xeon-r-processor-2-50ghz";
    let page = std::fs::read_to_string(pages.path().join(format!("{slug}.html"))).unwrap();
    assert!(page.contains("No max-plus validation is stored for this device"));
    assert!(page.contains("harness validate-suite"));
    // Tables also as Markdown and LaTeX.
    let tex = std::fs::read_to_string(pages.path().join(format!("{slug}.tex"))).unwrap();
    assert!(tex.contains("\\toprule") && tex.contains("\\bottomrule"));
    let md = std::fs::read_to_string(pages.path().join(format!("{slug}.md"))).unwrap();
    assert!(md.contains("| symbol | parameter |"));
}

#[test]
fn an_unknown_device_or_nothing_to_read_is_one_error_line() {
    let dirs = stored();
    let from = from_args(&dirs);
    let mut args: Vec<&str> = vec!["figures"];
    args.extend(from.iter().map(String::as_str));
    args.extend(["--device", "no-such-device", "--out", "/tmp/unused-figures"]);
    fails_with(
        &args,
        "known: host-amd-epyc, opencl-pthread-skylake-avx512-amd-epyc",
    );
    fails_with(
        &["report", "--from", "/nonexistent/results"],
        "nothing to read",
    );
}

#[test]
fn one_device_keeps_only_its_figures() {
    let out = tempfile::tempdir().unwrap();
    let o = harness()
        .arg("figures")
        .args(from_args(&stored()))
        .args(["--device", "host-amd-epyc"])
        .args(["--out", out.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let names: Vec<String> = tree(out.path())
        .into_iter()
        .map(|t| t.0.display().to_string())
        .collect();
    assert!(names
        .iter()
        .any(|n| n.contains("host-amd-epyc.latency.svg")));
    assert!(!names.iter().any(|n| n.contains("opencl-")), "{names:?}");
}

/// The first Chromium on the PATH.
#[cfg(not(no_chromium))]
fn chromium() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .find_map(|dir| {
            ["chromium", "chromium-browser", "google-chrome"]
                .iter()
                .map(|n| dir.join(n))
                .find(|p| p.is_file())
        })
        .expect("HARNESS_REQUIRE_CHROMIUM=1 but no chromium on the PATH (apt-get install chromium)")
}

#[test]
#[cfg_attr(
    no_chromium,
    ignore = "no Chromium here (apt-get install chromium; CI installs it)"
)]
fn the_report_reads_well_in_a_browser() {
    #[cfg(not(no_chromium))]
    {
        let pages = tempfile::tempdir().unwrap();
        let o = harness()
            .arg("report")
            .args(from_args(&stored()))
            .args(["--out", pages.path().to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut html_pages: Vec<PathBuf> = std::fs::read_dir(pages.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "html"))
            .collect();
        html_pages.sort();
        assert!(html_pages.len() >= 2, "{html_pages:?}");
        for page in &html_pages {
            check_page(page);
        }
        // A screenshot a person can look at (kept when HARNESS_KEEP_SCREENSHOTS names a folder).
        let shot = pages.path().join("screenshot.png");
        let status = std::process::Command::new(chromium())
            .args(headless())
            .args(["--window-size=1280,2400", "--hide-scrollbars"])
            .arg(format!("--screenshot={}", shot.display()))
            .arg(url(&pages.path().join("host-amd-epyc.html")))
            .output()
            .unwrap();
        assert!(status.status.success());
        let image = image::open(&shot).unwrap();
        assert_eq!(image.width(), 1280);
        if let Some(keep) = std::env::var_os("HARNESS_KEEP_SCREENSHOTS") {
            std::fs::copy(&shot, Path::new(&keep).join("report-host-amd-epyc.png")).unwrap();
        }
    }
}

#[cfg(not(no_chromium))]
fn headless() -> [&'static str; 4] {
    [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--allow-file-access-from-files",
    ]
}

#[cfg(not(no_chromium))]
fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Open every `<details>`, then measure in the browser: the page is no wider than the 1280 px
/// window, every figure is drawn with a real size, the console is silent and every link
/// resolves to a file of the report.
#[cfg(not(no_chromium))]
fn check_page(page: &Path) {
    let html = std::fs::read_to_string(page).unwrap();
    assert!(
        !html.contains("<script")
            && ["src=\"http", "href=\"http", "url(http", "@import"]
                .iter()
                .all(|n| !html.contains(n)),
        "{}: the report must need no script and no network",
        page.display()
    );
    let figures = html.matches("<figure").count();
    for href in html.split("href=\"").skip(1) {
        let target = href.split('"').next().unwrap();
        assert!(
            page.with_file_name(target).is_file(),
            "{}: link {target} resolves to nothing",
            page.display()
        );
    }
    let probe = "<script>document.querySelectorAll('details').forEach(function(d){d.open=true;});\
        var s=[].slice.call(document.querySelectorAll('figure svg'));\
        var empty=s.filter(function(x){var r=x.getBoundingClientRect();return !(r.width>100&&r.height>60);}).length;\
        var e=document.documentElement;\
        document.body.setAttribute('data-check',[e.scrollWidth,e.clientWidth,s.length,empty].join(' '));\
        </script></body>";
    let copy = page.with_extension("check.html");
    std::fs::write(&copy, html.replace("</body>", probe)).unwrap();
    let o = std::process::Command::new(chromium())
        .args(headless())
        .args(["--window-size=1280,900", "--enable-logging=stderr", "--v=0"])
        .arg("--dump-dom")
        .arg(url(&copy))
        .output()
        .unwrap();
    std::fs::remove_file(&copy).unwrap();
    let dom = String::from_utf8_lossy(&o.stdout);
    let log = String::from_utf8_lossy(&o.stderr);
    let check = dom
        .split("data-check=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or_else(|| panic!("{}: the probe did not run: {log}", page.display()));
    let v: Vec<usize> = check.split(' ').map(|x| x.parse().unwrap()).collect();
    let (scroll, client, drawn, empty) = (v[0], v[1], v[2], v[3]);
    assert!(
        scroll <= client,
        "{}: the page is {scroll} px wide in a {client} px window",
        page.display()
    );
    assert_eq!(drawn, figures, "{}: figures in the DOM", page.display());
    assert_eq!(empty, 0, "{}: figures drawn without size", page.display());
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "{}: {console:?}", page.display());
}

/// `harness report` over the fixtures in `dir` into a temporary folder (kept while the
/// first value lives), and a reader of its device page for a slug.
fn report_pages(dir: PathBuf) -> (tempfile::TempDir, impl Fn(&str) -> String) {
    let out = tempfile::tempdir().unwrap();
    let o = harness()
        .arg("report")
        .args(from_args(&[dir]))
        .args(["--out", out.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let folder = out.path().to_path_buf();
    let page =
        move |slug: &str| std::fs::read_to_string(folder.join(format!("{slug}.html"))).unwrap();
    (out, page)
}

#[test]
fn the_host_page_shows_one_threads_rates_where_a_calibration_measured_them() {
    let calibrations = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/one-thread");
    let (_out, page) = report_pages(calibrations);
    let host = page("host-intel-r-xeon-r-processor");
    assert!(host.contains("Streaming bandwidth per level on one thread"));
    assert!(host.contains("strided read on one thread: Δt"));
    let pocl = page("opencl-pthread-skylake-avx512-intel-r-xeon-r-processor");
    assert!(!pocl.contains("on one thread"));
}

#[test]
fn the_device_page_says_where_device_memorys_row_starts_pooling_and_which_rows_are_passes() {
    let slug = "opencl-pthread-skylake-avx512-intel-r-xeon-r-processor";
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/one-thread/{slug}.json"));
    let mut c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let levels = c["bandwidth"]["levels"].as_array_mut().unwrap();
    let memory = levels.last_mut().unwrap();
    assert_eq!(memory["level"], "memory");
    memory["plateau_from_bytes"] = serde_json::json!(128u64 << 20);
    levels[0]["passes_in_launch"] = serde_json::json!(true);
    let first = levels[0]["level"].as_str().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(format!("{slug}.json")), c.to_string()).unwrap();
    let (_out, page) = report_pages(dir.path().to_path_buf());
    let page = page(slug);
    assert!(page.contains("memory (plateau from 128 MiB)"));
    assert!(
        page.contains(&format!("{first} (passes in one launch)")),
        "{first}"
    );
}

#[test]
fn a_validations_row_says_what_bounds_its_kernels() {
    let ports = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ports");
    let (_out, page) = report_pages(ports);
    // Validations written with regimes show them; older ones say nothing was recorded.
    let newer = page("opencl-pthread-skylake-avx512-amd-epyc");
    assert!(newer.contains("kernels bound by"));
    assert!(newer.contains("sgemm_nt: below-roofs"), "sgemm's regime");
    assert!(newer.contains("triad: bandwidth-bound"), "triad's regime");
    let older = page("opencl-pthread-haswell-amd-epyc");
    assert!(older.contains("kernels bound by") && !older.contains("below-roofs"));
}

#[test]
fn a_missing_folder_is_left_out_with_a_note_not_counted_as_a_skipped_file() {
    // A --from folder that does not exist (say, results/ on a fresh checkout) is left out.
    let out = tempfile::tempdir().unwrap();
    let o = harness()
        .arg("figures")
        .args(from_args(&stored()))
        .args(["--from", "/nonexistent/results"])
        .args(["--out", out.path().to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("note: /nonexistent/results does not exist; left out"));
    assert!(
        !stderr.lines().any(|l| l.starts_with("skipped ")),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains(" 0 file(s) skipped"), "{stdout}");
}
