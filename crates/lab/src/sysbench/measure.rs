//! One experiment: start both servers, load the tables with sysbench's
//! `prepare`, then run every cell on both servers in every pair.

use std::io;
use std::path::Path;
use std::time::Duration;

use super::runner::{Outcome, Sysbench};
use super::{Settings, CHANGE_ROWS};
use crate::child::{connect, simple_query};
use crate::pgbench::measure::load_average;
use crate::pgbench::report::pairs;
use crate::pgbench::servers::{
    show, start_both, start_postgres_with, start_snapscale_with, Kind, Server, Started,
};

/// One timed run.
#[derive(Clone, Debug)]
pub(super) struct Run {
    pub(super) pair: usize,
    pub(super) test: String,
    pub(super) threads: usize,
    pub(super) server: Kind,
    pub(super) result: Result<Outcome, String>,
}

/// The servers and everything measured on them.
pub(super) struct Measurement {
    /// `sysbench --version`.
    pub(super) sysbench: String,
    /// Why PostgreSQL was not measured, if it was not.
    pub(super) postgres_skipped: Option<String>,
    /// `postgres --version`.
    pub(super) postgres_version: String,
    /// Per server: the settings the lab sets, as `SHOW` reported them.
    pub(super) shown: Vec<(Kind, String)>,
    /// Per server: every load of the tables (`prepare`, then VACUUM
    /// ANALYZE), the first before any run and one after each run of a test
    /// in [`CHANGE_ROWS`]: how long `prepare` took, or why it failed.
    pub(super) loads: Vec<(Kind, Vec<Result<Duration, String>>)>,
    /// /proc/loadavg before the servers started and after the last run:
    /// other work on the machine shows here.
    pub(super) load: (String, String),
    pub(super) runs: Vec<Run>,
}

pub(super) fn measure(settings: &Settings) -> io::Result<Measurement> {
    let sysbench = Sysbench::find(settings.tables, settings.table_size)
        .map_err(|why| io::Error::other(format!("{why}: cannot run")))?;
    let work = std::env::temp_dir().join(format!("snapscale-lab-sysbench-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let result = measure_in(settings, &sysbench, &work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn measure_in(settings: &Settings, sysbench: &Sysbench, work: &Path) -> io::Result<Measurement> {
    let load_before = load_average();
    let snapscale_settings = settings.snapscale_settings();
    let pg_settings = settings.postgres_settings();
    let Started { mut servers, postgres_skipped, postgres_version } = start_both(
        "sysbench",
        &settings.pg_bin,
        || start_snapscale_with(work, settings.max_connections(), &pairs(&snapscale_settings)),
        || start_postgres_with(&settings.pg_bin, work, "sysbench", &pairs(&pg_settings)),
    )?;
    let shown: Vec<(Kind, String)> = servers
        .iter()
        .map(|s| {
            let names = if s.kind == Kind::Snapscale { &snapscale_settings } else { &pg_settings };
            let shown = show(&settings.pg_bin, s.port, &pairs(names));
            eprintln!("lab sysbench: {} runs with {shown}", s.kind.label());
            (s.kind, shown)
        })
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut loads: Vec<(Kind, Vec<Result<Duration, String>>)> =
        servers.iter().map(|s| (s.kind, Vec::new())).collect();
    for (server, (_, done)) in servers.iter_mut().zip(&mut loads) {
        done.push(load(&runtime, sysbench, settings, server));
    }

    // Which servers' tables a test in CHANGE_ROWS has changed since they
    // were loaded: loaded again before their next run.
    let mut changed = vec![false; servers.len()];
    let mut runs = Vec::new();
    for pair in 1..=settings.pairs {
        for test in &settings.tests {
            for &threads in &settings.threads {
                // snapscale first in odd pairs, PostgreSQL first in even
                // ones, so that neither always runs in the other's wake.
                let mut order: Vec<usize> = (0..servers.len()).collect();
                if pair % 2 == 0 {
                    order.reverse();
                }
                for i in order {
                    let server = &mut servers[i];
                    if std::mem::take(&mut changed[i]) {
                        loads[i].1.push(load(&runtime, sysbench, settings, server));
                    }
                    let result = match server.check_gone() {
                        Some(why) => Err(why),
                        None => sysbench.run(server.port, test, threads, settings.seconds),
                    };
                    // A failed run may be the server dying: say so in the same place.
                    let result = result.map_err(|why| match server.check_gone() {
                        Some(gone) if !why.contains(&gone) => format!("{why}\n{gone}"),
                        _ => why,
                    });
                    changed[i] = CHANGE_ROWS.contains(&test.as_str());
                    let label = server.kind.label();
                    match &result {
                        Ok(o) => eprintln!(
                            "lab sysbench: pair {pair}/{} {test} threads={threads} {label}: {:.0} tps, \
                             {} ignored errors{}",
                            settings.pairs,
                            o.tps,
                            o.ignored_errors,
                            o.problem.as_deref().map(|p| format!(" ({p})")).unwrap_or_default()
                        ),
                        Err(why) => {
                            eprintln!(
                                "lab sysbench: pair {pair} {test} threads={threads} {label}: FAILED: {why}"
                            )
                        }
                    }
                    runs.push(Run { pair, test: test.clone(), threads, server: server.kind, result });
                }
            }
        }
    }
    Ok(Measurement {
        sysbench: sysbench.version.clone(),
        postgres_skipped,
        postgres_version,
        shown,
        loads,
        load: (load_before, load_average()),
        runs,
    })
}

/// Drops and loads the tables on `server` with sysbench, then VACUUM
/// ANALYZE on each, so that every server starts from the same fresh,
/// analysed tables; untimed. A failed load marks the server gone: its
/// tables are not what the runs need.
fn load(
    runtime: &tokio::runtime::Runtime,
    sysbench: &Sysbench,
    settings: &Settings,
    server: &mut Server,
) -> Result<Duration, String> {
    if let Some(why) = server.check_gone() {
        return Err(why);
    }
    let loaded = sysbench.load(server.port).and_then(|took| {
        runtime.block_on(vacuum_analyze(server.port, settings.tables))?;
        Ok(took)
    });
    match &loaded {
        Ok(took) => eprintln!(
            "lab sysbench: {} loaded {} × {} rows in {:.1} s",
            server.kind.label(),
            settings.tables,
            settings.table_size,
            took.as_secs_f64()
        ),
        Err(why) => {
            eprintln!("lab sysbench: {} could not load the tables: {why}", server.kind.label());
            server.gone = Some(format!("loading the tables failed: {why}"));
        }
    }
    loaded
}

async fn vacuum_analyze(port: u16, tables: usize) -> Result<(), String> {
    let mut session = connect(port, "postgres").await.map_err(|e| format!("cannot connect: {e}"))?;
    for t in 1..=tables {
        let sql = format!("VACUUM ANALYZE sbtest{t}");
        simple_query(&mut session, &sql).await.map_err(|e| format!("{sql}: {e}"))?;
    }
    Ok(())
}
