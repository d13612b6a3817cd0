//! pgbench, unmodified, against the server: initialisation at scale 1
//! (COPY ... WITH (FREEZE ON), VACUUM, ALTER TABLE ADD PRIMARY KEY), then
//! each built-in script in each query mode with 4 clients, with 0 failed
//! transactions and the balances consistent afterwards.
//!
//! Skips (with a message) when pgbench is not installed; CI installs it.
//! `SNAPSCALE_PGBENCH_SECONDS` sets the length of each run (default 10).

mod wire;

use std::net::SocketAddr;
use std::process::Command;

use tokio_postgres::NoTls;
use wire::start;

fn pgbench_available() -> bool {
    Command::new("pgbench").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Runs pgbench with `args`; returns (transactions processed, failed).
fn pgbench(addr: SocketAddr, args: &[&str]) -> (u64, u64) {
    let out = Command::new("pgbench")
        .args(["-h", &addr.ip().to_string(), "-p", &addr.port().to_string(), "-U", "postgres"])
        .args(args)
        .arg("postgres")
        .output()
        .expect("pgbench runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "pgbench {args:?} failed:\n{stdout}\n{stderr}");
    let number = |prefix: &str| {
        stdout.lines().find_map(|l| l.trim().strip_prefix(prefix)).and_then(|rest| {
            rest.trim().split(|c: char| !c.is_ascii_digit()).next().and_then(|n| n.parse::<u64>().ok())
        })
    };
    let processed = number("number of transactions actually processed:").unwrap_or(0);
    let failed = number("number of failed transactions:").unwrap_or(0);
    (processed, failed)
}

async fn sums(addr: SocketAddr) -> [i64; 4] {
    let (client, conn) =
        tokio_postgres::connect(&format!("host={} port={} user=postgres", addr.ip(), addr.port()), NoTls)
            .await
            .unwrap();
    tokio::spawn(conn);
    let mut out = [0; 4];
    for (i, sql) in [
        "SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts",
        "SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers",
        "SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches",
        "SELECT coalesce(sum(delta), 0) FROM pgbench_history",
    ]
    .iter()
    .enumerate()
    {
        out[i] = client.query_one(*sql, &[]).await.unwrap().get(0);
    }
    let branches: i64 = client.query_one("SELECT count(*) FROM pgbench_branches", &[]).await.unwrap().get(0);
    assert_eq!(branches, 1, "scale 1 has one branch");
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pgbench_runs_unmodified_with_no_failed_transactions() {
    if !pgbench_available() {
        eprintln!("SKIPPED: pgbench is not installed (apt-get install postgresql-client)");
        return;
    }
    let seconds = std::env::var("SNAPSCALE_PGBENCH_SECONDS").unwrap_or_else(|_| "10".into());
    let server = start(|s| s.max_connections = 20).await;
    let addr = server.addr;
    let run = |args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            pgbench(addr, &args.iter().map(String::as_str).collect::<Vec<_>>())
        })
    };
    let init = run(vec!["-i".into(), "-s".into(), "1".into()]).await.unwrap();
    assert_eq!(init.1, 0);
    // Read-only and tpcb-like runs: every write keeps the four sums
    // equal. -n keeps pgbench_history across runs.
    for mode in ["simple", "extended", "prepared"] {
        for script in ["select-only", "tpcb-like"] {
            let args = ["-n", "-c", "4", "-j", "2", "-T", &seconds, "-M", mode, "-b", script];
            let (processed, failed) = run(args.iter().map(|s| s.to_string()).collect()).await.unwrap();
            assert_eq!(failed, 0, "{script} -M {mode}");
            assert!(processed > 0, "{script} -M {mode} processed nothing");
        }
        let [a, t, b, d] = sums(addr).await;
        assert_eq!((a, t, b), (d, d, d), "after -M {mode}: accounts, tellers, branches, history");
    }
    // simple-update (-N) changes accounts and history only.
    for mode in ["simple", "extended", "prepared"] {
        let args = ["-n", "-c", "4", "-j", "2", "-T", &seconds, "-M", mode, "-b", "simple-update"];
        let (processed, failed) = run(args.iter().map(|s| s.to_string()).collect()).await.unwrap();
        assert_eq!(failed, 0, "simple-update -M {mode}");
        assert!(processed > 0);
    }
    let [a, t, b, d] = sums(addr).await;
    assert_eq!(a, d, "accounts follow history");
    assert_eq!(t, b, "tellers and branches move together");
    // A custom script (-f), and pgbench's own start-up (vacuum, truncate).
    let script = std::env::temp_dir().join(format!("snapscale-pgbench-{}.sql", std::process::id()));
    std::fs::write(
        &script,
        "\\set aid random(1, 100000 * :scale)\nBEGIN;\nSELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
         UPDATE pgbench_accounts SET abalance = abalance WHERE aid = :aid;\nEND;\n",
    )
    .unwrap();
    let args =
        vec!["-c".into(), "2".into(), "-t".into(), "50".into(), "-f".into(), script.display().to_string()];
    let (processed, failed) = run(args).await.unwrap();
    assert_eq!((processed, failed), (100, 0));
    let _ = std::fs::remove_file(script);
}
