//! `snapscale lab sysbench`, end to end on a tiny table: sysbench's own
//! `prepare` loads it on the lab's snapscale (and PostgreSQL 15 when its
//! server binaries are installed), a read and a write script run for two
//! seconds each, and the CSV, SVG and Markdown come out with a snapscale
//! row per run that completed without errors.
//!
//! Skips (with a message) when sysbench is not installed: the lab is not
//! part of CI, this is its smoke test.

use std::path::PathBuf;
use std::process::Command;

fn sysbench_available() -> bool {
    Command::new("sysbench").arg("--version").output().is_ok_and(|o| o.status.success())
}

#[test]
fn lab_sysbench_runs_on_a_tiny_table() {
    if !sysbench_available() {
        eprintln!("SKIPPED: sysbench is not installed (apt-get install sysbench)");
        return;
    }
    let out = std::env::temp_dir().join(format!("snapscale-sysbench-smoke-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let run = Command::new(env!("CARGO_BIN_EXE_snapscale"))
        .args(["lab", "sysbench", "--quick", "--table-size", "500", "--time", "2"])
        .args(["--tests", "oltp_point_select,oltp_delete", "--name", "smoke", "--out"])
        .arg(&out)
        .output()
        .expect("snapscale runs");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "lab sysbench failed:\n{stderr}");
    let file = |ext: &str| -> String {
        let path: PathBuf = out.join(format!("smoke.{ext}"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}\n{stderr}", path.display()))
    };
    let csv = file("csv");
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let snapscale: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_owned).collect::<Vec<_>>())
        .filter(|row| row[column("server")] == "snapscale")
        .collect();
    assert_eq!(snapscale.len(), 2, "one snapscale run per script:\n{csv}\n{stderr}");
    for row in &snapscale {
        let tps: f64 = row[column("tps")].parse().unwrap_or_else(|_| panic!("a tps in {row:?}\n{stderr}"));
        assert!(tps > 0.0, "{row:?}");
        assert_eq!(row[column("error")], "", "{row:?}\n{stderr}");
    }
    assert!(file("svg").starts_with("<svg"), "an SVG chart");
    let page = file("md");
    assert!(page.contains("lab sysbench --quick"), "the page records the command:\n{page}");
    assert!(page.contains("oltp_delete"), "{page}");
    let _ = std::fs::remove_dir_all(&out);
}
