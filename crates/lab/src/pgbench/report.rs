//! From runs to the report: per-cell medians, the figure and the Markdown summary.

use std::thread;

use super::measure::{Measurement, Run};
use super::runner::Outcome;
use super::servers::Kind;
use super::Settings;
use crate::disk::SyncPattern;
use crate::report::plot::{Figure, Panel, Series};
use crate::report::stats::median;
use crate::report::table::{Table, Value};

/// One cell's summary over the rounds.
#[derive(Clone, Debug)]
pub(super) struct Cell {
    pub(super) workload: &'static str,
    pub(super) clients: usize,
    /// pgbench and the server confined to one CPU.
    pub(super) pinned: bool,
    pub(super) snapscale_tps: Option<f64>,
    pub(super) postgres_tps: Option<f64>,
    /// Median of the per-round ratios snapscale / PostgreSQL.
    pub(super) ratio: Option<f64>,
    /// The per-round ratios, in round order: their spread is the honest
    /// error bar on this VM.
    pub(super) round_ratios: Vec<f64>,
    pub(super) snapscale_failed: u64,
    pub(super) postgres_failed: u64,
    /// Median over rounds of the device flushes per transaction.
    pub(super) snapscale_flushes: Option<f64>,
    pub(super) postgres_flushes: Option<f64>,
    /// Median over rounds of the average latency, ms.
    pub(super) snapscale_latency_ms: Option<f64>,
    pub(super) postgres_latency_ms: Option<f64>,
}

impl Cell {
    pub(super) fn tps(&self, kind: Kind) -> Option<f64> {
        if kind == Kind::Snapscale {
            self.snapscale_tps
        } else {
            self.postgres_tps
        }
    }

    pub(super) fn flushes(&self, kind: Kind) -> Option<f64> {
        if kind == Kind::Snapscale {
            self.snapscale_flushes
        } else {
            self.postgres_flushes
        }
    }

    pub(super) fn latency_ms(&self, kind: Kind) -> Option<f64> {
        if kind == Kind::Snapscale {
            self.snapscale_latency_ms
        } else {
            self.postgres_latency_ms
        }
    }
}

pub(super) fn cells(settings: &Settings, runs: &[Run]) -> Vec<Cell> {
    let mut cells = Vec::new();
    for &workload in &settings.workloads {
        for (clients, pinned) in settings.cells() {
            let of = |kind: Kind| -> Vec<&Run> {
                runs.iter()
                    .filter(|r| {
                        r.workload == workload
                            && r.clients == clients
                            && r.pinned == pinned
                            && r.server == kind
                            && r.idle == 0
                    })
                    .collect()
            };
            let median_of = |v: Vec<f64>| (!v.is_empty()).then(|| median(v));
            let ok = |kind: Kind| -> Vec<Outcome> {
                of(kind).iter().filter_map(|r| r.result.as_ref().ok()).cloned().collect()
            };
            let tps = |kind: Kind| median_of(ok(kind).iter().map(|o| o.tps).collect());
            let latency = |kind: Kind| median_of(ok(kind).iter().map(|o| o.latency_ms).collect());
            let failed = |kind: Kind| -> u64 { ok(kind).iter().map(|o| o.failed).sum() };
            let flushes =
                |kind: Kind| median_of(of(kind).iter().filter_map(|r| r.flushes_per_transaction()).collect());
            let ratios: Vec<f64> = (1..=settings.rounds)
                .filter_map(|round| {
                    let in_round = |kind: Kind| {
                        of(kind)
                            .iter()
                            .find(|r| r.round == round)
                            .and_then(|r| r.result.as_ref().ok())
                            .map(|o| o.tps)
                    };
                    Some(in_round(Kind::Snapscale)? / in_round(Kind::Postgres)?)
                })
                .collect();
            cells.push(Cell {
                workload,
                clients,
                pinned,
                snapscale_tps: tps(Kind::Snapscale),
                postgres_tps: tps(Kind::Postgres),
                ratio: median_of(ratios.clone()),
                round_ratios: ratios,
                snapscale_failed: failed(Kind::Snapscale),
                postgres_failed: failed(Kind::Postgres),
                snapscale_flushes: flushes(Kind::Snapscale),
                postgres_flushes: flushes(Kind::Postgres),
                snapscale_latency_ms: latency(Kind::Snapscale),
                postgres_latency_ms: latency(Kind::Postgres),
            });
        }
    }
    cells
}

/// snapscale with `--idle` connections open against its own idle-free
/// runs, for one cell.
#[derive(Clone, Debug)]
pub(super) struct IdleCell {
    pub(super) workload: &'static str,
    pub(super) clients: usize,
    pub(super) pinned: bool,
    pub(super) idle: usize,
    /// Medians over rounds.
    pub(super) without_tps: Option<f64>,
    pub(super) with_tps: Option<f64>,
    /// Median of the per-round ratios with / without.
    pub(super) ratio: Option<f64>,
    pub(super) round_ratios: Vec<f64>,
}

pub(super) fn idle_cells(settings: &Settings, runs: &[Run]) -> Vec<IdleCell> {
    if settings.idle == 0 {
        return Vec::new();
    }
    let mut cells = Vec::new();
    for &workload in &settings.workloads {
        for (clients, pinned) in settings.cells() {
            let tps = |idle: usize, round: Option<usize>| -> Vec<f64> {
                runs.iter()
                    .filter(|r| {
                        r.workload == workload
                            && r.clients == clients
                            && r.pinned == pinned
                            && r.server == Kind::Snapscale
                            && r.idle == idle
                            && round.is_none_or(|n| r.round == n)
                    })
                    .filter_map(|r| r.result.as_ref().ok().map(|o| o.tps))
                    .collect()
            };
            let median_of = |v: Vec<f64>| (!v.is_empty()).then(|| median(v));
            let ratios: Vec<f64> = (1..=settings.rounds)
                .filter_map(|round| {
                    Some(tps(settings.idle, Some(round)).first()? / tps(0, Some(round)).first()?)
                })
                .collect();
            cells.push(IdleCell {
                workload,
                clients,
                pinned,
                idle: settings.idle,
                without_tps: median_of(tps(0, None)),
                with_tps: median_of(tps(settings.idle, None)),
                ratio: median_of(ratios.clone()),
                round_ratios: ratios,
            });
        }
    }
    cells
}

/// The `--idle` paragraph and table.
pub(super) fn idle_text(cells: &[IdleCell]) -> String {
    let Some(first) = cells.first() else { return String::new() };
    let mut out = format!(
        "**{} idle connections.** Every cell ran snapscale once more with {} connections open \
         next to pgbench (each through PostgreSQL's startup exchange, then silent, each holding a \
         proc-array slot; opened before the run, asked `SELECT 1` after it, then closed). Median tps \
         over rounds, and the median of the per-round ratios of snapscale with them to snapscale \
         without them: ",
        first.idle, first.idle
    );
    let sentences: Vec<String> = cells
        .iter()
        .map(|c| {
            format!(
                "{}, {} client{}{}: {} tps with, {} tps without, ratio **{}** (rounds: {})",
                c.workload,
                c.clients,
                if c.clients == 1 { "" } else { "s" },
                if c.pinned { " pinned to one CPU" } else { "" },
                fmt_opt(c.with_tps, 0),
                fmt_opt(c.without_tps, 0),
                fmt_opt(c.ratio, 2),
                ratios_text(&c.round_ratios)
            )
        })
        .collect();
    out.push_str(&sentences.join("; "));
    out.push_str(". PostgreSQL was not run with idle connections.\n\n");
    let mut table = Table::new(&[
        "workload",
        "clients",
        "pinned",
        "idle_connections",
        "with_idle_tps",
        "without_idle_tps",
        "ratio",
        "round_ratios",
    ]);
    for c in cells {
        table.push(vec![
            Value::from(c.workload),
            Value::from(c.clients),
            Value::from(if c.pinned { "yes" } else { "no" }),
            Value::from(c.idle),
            number_or_na(c.with_tps),
            number_or_na(c.without_tps),
            number_or_na(c.ratio),
            Value::from(ratios_text(&c.round_ratios)),
        ]);
    }
    out.push_str(&table.markdown());
    out.push('\n');
    out
}

pub(crate) fn ratios_text(ratios: &[f64]) -> String {
    ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(", ")
}

pub(crate) fn number_or_na(x: Option<f64>) -> Value {
    x.map_or(Value::from("n/a"), Value::from)
}

pub(super) fn figure(settings: &Settings, cells: &[Cell], idle: &[IdleCell], with_postgres: bool) -> Figure {
    let mut kinds = vec![Kind::Snapscale];
    if with_postgres {
        kinds.push(Kind::Postgres);
    }
    let panel = |title: String, workload: &str, y: &dyn Fn(&Cell, Kind) -> Option<f64>| Panel {
        title,
        series: kinds
            .iter()
            .map(|&kind| Series {
                label: kind.label().into(),
                points: cells
                    .iter()
                    // Against clients, the pinned runs would be a second
                    // line in one series: they are in the tables.
                    .filter(|c| c.workload == workload && !c.pinned)
                    .filter_map(|c| Some((c.clients as f64, y(c, kind)?)))
                    .collect(),
            })
            .collect(),
    };
    // snapscale with the idle connections open, in the throughput panels.
    let with_idle = |workload: &str| -> Option<Series> {
        let first = idle.first()?;
        Some(Series {
            label: format!("snapscale, {} idle", first.idle),
            points: idle
                .iter()
                .filter(|c| c.workload == workload && !c.pinned)
                .filter_map(|c| Some((c.clients as f64, c.with_tps?)))
                .collect(),
        })
    };
    let mut panels: Vec<Panel> = settings
        .workloads
        .iter()
        .map(|&workload| {
            let title = if settings.durable {
                format!("{workload}, fsync on: transactions per second")
            } else {
                format!("{workload}, -M prepared")
            };
            let mut p = panel(title, workload, &|c: &Cell, kind| c.tps(kind));
            p.series.extend(with_idle(workload));
            p
        })
        .collect();
    if settings.durable {
        // Group commit shows as fewer flushes than transactions.
        panels.extend(settings.workloads.iter().map(|&workload| {
            panel(format!("{workload}: disk flushes per transaction"), workload, &|c: &Cell, kind| {
                c.flushes(kind)
            })
        }));
    }
    Figure {
        title: if settings.durable {
            "pgbench, durable commits: snapscale and PostgreSQL 15 (median of rounds)".into()
        } else {
            "pgbench: snapscale and PostgreSQL 15 (median of rounds)".into()
        },
        x_label: "clients".into(),
        y_label: if settings.durable {
            "see the panel titles".into()
        } else {
            "transactions per second".into()
        },
        x_log: false,
        y_log: false,
        panels,
    }
}

pub(crate) fn fmt_opt(x: Option<f64>, decimals: usize) -> String {
    x.map_or("n/a".into(), |x| format!("{x:.decimals$}"))
}

/// The durable variant's paragraphs on the fsync latency and on group
/// commit, with the measured numbers in them.
pub(super) fn durable_text(settings: &Settings, m: &Measurement, cells: &[Cell]) -> String {
    let mut out = String::new();
    let latency = |pattern: SyncPattern| {
        m.disk.as_ref()?.latencies.iter().filter_map(|l| l.as_ref().ok()).find(|l| l.pattern == pattern)
    };
    if let Some(disk) = &m.disk {
        let fs = disk.filesystem.as_ref().map_or("an unknown filesystem".into(), |f| f.to_string());
        let lines: Vec<String> = disk
            .latencies
            .iter()
            .map(|l| match l {
                Ok(l) => format!("- {l}"),
                Err(e) => format!("- the probe failed: {e}"),
            })
            .collect();
        out.push_str(&format!(
            "**fsync latency.** Measured once, before the servers started, in the temporary directory \
             that holds both data directories ({fs}), {} s per pattern:\n\n{}\n",
            settings.probe_seconds,
            lines.join("\n")
        ));
        match &disk.pg_test_fsync {
            Some(Ok(line)) => out.push_str(&format!(
                "- PostgreSQL's `pg_test_fsync` in the same directory, one 8 kB write (its first, \
                 mean-based section; the wal_sync_method PostgreSQL uses on Linux): {line}\n"
            )),
            Some(Err(why)) => out.push_str(&format!("- pg_test_fsync failed: {why}\n")),
            None => {}
        }
        out.push('\n');
    }

    let first = settings.clients.iter().min().copied().unwrap_or(1);
    let most = settings.clients.iter().max().copied().unwrap_or(1);
    let cell = |clients: usize| cells.iter().find(|c| c.clients == clients && !c.pinned);
    let kinds: Vec<Kind> = if m.postgres_skipped.is_none() {
        vec![Kind::Snapscale, Kind::Postgres]
    } else {
        vec![Kind::Snapscale]
    };
    let describe = |kind: Kind| -> String {
        let at = |clients: usize| -> String {
            let c = cell(clients);
            format!(
                "{} tps at {clients} client{} ({} ms per transaction, {} disk flushes per transaction)",
                fmt_opt(c.and_then(|c| c.tps(kind)), 0),
                if clients == 1 { "" } else { "s" },
                fmt_opt(c.and_then(|c| c.latency_ms(kind)), 2),
                fmt_opt(c.and_then(|c| c.flushes(kind)), 2)
            )
        };
        let sharing = cell(first)
            .and_then(|c| c.flushes(kind))
            .zip(cell(most).and_then(|c| c.flushes(kind)))
            .filter(|(_, many)| *many > 0.0)
            .map(|(one, many)| {
                format!(", so about {:.1} commits shared each sync at {most} clients", one / many)
            })
            .unwrap_or_default();
        format!("{} made {} and {}{sharing}", kind.label(), at(first), at(most))
    };
    // The device's flush rate at the most clients, against the rate of
    // back-to-back syncs in the probe's in-place pattern: both servers
    // overwrite zero-filled WAL segments.
    let rate = |kind: Kind| -> Option<String> {
        let c = cell(most)?;
        let per_second = c.tps(kind)? * c.flushes(kind)?;
        let serial = latency(SyncPattern::InPlace).map_or(String::new(), |l| {
            format!(
                " ({:.0} % of the {:.0} back-to-back syncs per second the probe's in-place median allows)",
                100.0 * per_second * l.median_us / 1e6,
                1e6 / l.median_us,
            )
        });
        Some(format!("{} about {per_second:.0}{serial}", kind.label()))
    };
    // How much of a lone client's transaction the sync is.
    let one_client = {
        let ms: Vec<String> = kinds
            .iter()
            .filter_map(|&k| Some(format!("{} {:.2} ms", k.label(), cell(first)?.latency_ms(k)?)))
            .collect();
        let syncs: Vec<String> = m
            .disk
            .iter()
            .flat_map(|d| &d.latencies)
            .flatten()
            .map(|l| format!("{:.2} ms", l.median_us / 1e3))
            .collect();
        if first == 1 && !ms.is_empty() && !syncs.is_empty() {
            format!(
                " At 1 client the sync is only part of each transaction's latency ({} per transaction, \
                 against median syncs of {} in the probe): the rest is the transaction's seven \
                 statements, each a round trip in which one process waits for the other to be woken, \
                 which on this VM often means waking an idle CPU. That is also why 2 clients can show a \
                 lower latency than 1, and why single-client numbers move most from round to round.",
                ms.join(", "),
                syncs.join(" and ")
            )
        } else {
            String::new()
        }
    };
    let rates: Vec<String> = kinds.iter().filter_map(|&k| rate(k)).collect();
    let rates = if rates.is_empty() {
        String::new()
    } else {
        format!(
            " At {most} clients the device completed, as tps × flushes per transaction, {} flushes per \
             second; both servers write their WAL over segments zero-filled beforehand (snapscale since \
             2026-11-29; before, it appended to growing files, the probe's other pattern).",
            rates.join(" and ")
        )
    };
    let bound = latency(SyncPattern::InPlace)
        .map(|l| {
            format!(
                " Syncs one after another, at the in-place median of {:.0} µs, would allow at most {:.0} \
                 commits per second{}.",
                l.median_us,
                1e6 / l.median_us,
                latency(SyncPattern::Append)
                    .map(|a| format!(
                        " ({:.0} at the append median of {:.0} µs)",
                        1e6 / a.median_us,
                        a.median_us
                    ))
                    .unwrap_or_default()
            )
        })
        .unwrap_or_default();
    out.push_str(&format!(
        "**Group commit.** With synchronous_commit on, a server acknowledges a commit only after an \
         fdatasync of the WAL that covers the commit record has returned, so one client commits at most \
         once per sync, and its latency is its transaction's work plus one sync.{bound} Group commit is \
         what lets concurrent clients do better: one sync covers every record written before it starts, \
         so commits that arrive while a sync runs wait for the next one and share it. In snapscale one \
         WAL flusher thread syncs everything appended so far and then wakes every commit it covered, \
         except that a connection alone on its worker thread syncs its own commit when no sync is \
         running (sparing two thread hand-offs); in \
         PostgreSQL the backend that holds WALWriteLock flushes all WAL inserted so far, and the \
         backends queued behind it find their records already flushed. commit_delay is 0 in PostgreSQL \
         and snapscale has none, so neither waits to gather a larger group: a group is whatever \
         queued up during the previous sync. {}.{one_client} The disk flushes per transaction at 1 client are what \
         one commit's sync costs in device flushes on this filesystem, and their drop at {most} clients \
         is the sharing; the estimate of commits per sync divides the two, so it assumes a sync costs as \
         many flushes at {most} clients as at 1.{rates} With {most} clients on {} CPUs (pgbench's threads \
         included), the size of a group is also bounded by how many clients get CPU time to reach their \
         commit during one sync.\n\n",
        kinds.iter().map(|&k| describe(k)).collect::<Vec<_>>().join("; "),
        thread::available_parallelism().map_or(1, |n| n.get())
    ));
    out
}

pub(super) fn summary(settings: &Settings, m: &Measurement, cells: &[Cell], idle: &[IdleCell]) -> String {
    let mut out = String::new();
    let plural = |n: usize| if n == 1 { "client" } else { "clients" };
    let mut sentences = Vec::new();
    for c in cells {
        let ss = c.snapscale_tps.map_or("n/a".into(), |t| format!("{t:.0}"));
        let pg = c.postgres_tps.map_or("n/a".into(), |t| format!("{t:.0}"));
        let ratio = c.ratio.map_or(String::new(), |r| {
            format!(", ratio **{r:.2}** (rounds: {})", ratios_text(&c.round_ratios))
        });
        sentences.push(format!(
            "{}, {} {}{}: snapscale {ss} tps, PostgreSQL {pg} tps{ratio}",
            c.workload,
            c.clients,
            plural(c.clients),
            if c.pinned { " pinned to one CPU" } else { "" }
        ));
    }
    out.push_str(&format!(
        "Median tps over {} round(s) of {} s per run, and the median of the per-round ratios \
         snapscale / PostgreSQL: {}.\n\n",
        settings.rounds,
        settings.seconds,
        sentences.join("; ")
    ));
    out.push_str(&idle_text(idle));
    let failed_ss: u64 = cells.iter().map(|c| c.snapscale_failed).sum();
    let failed_pg: u64 = cells.iter().map(|c| c.postgres_failed).sum();
    let problems: Vec<&Run> =
        m.runs.iter().filter(|r| r.result.as_ref().map_or(true, |o| o.problem.is_some())).collect();
    out.push_str(&format!(
        "Failed transactions over all runs: snapscale {failed_ss}, PostgreSQL {failed_pg}. Runs with \
         errors: {}.\n\n",
        problems.len()
    ));
    if let Some(why) = &m.postgres_skipped {
        out.push_str(&format!(
            "**PostgreSQL was not measured:** {why}. Only snapscale's numbers are real.\n\n"
        ));
    }
    for (kind, init) in &m.inits {
        if let Err(why) = init {
            out.push_str(&format!("**{} `pgbench -i` failed:**\n\n```\n{why}\n```\n\n", kind.label()));
        }
    }
    for r in &problems {
        let text = match &r.result {
            Ok(o) => o.problem.clone().unwrap_or_default(),
            Err(why) => why.clone(),
        };
        out.push_str(&format!(
            "**Round {} {} c={}{} {}:**\n\n```\n{text}\n```\n\n",
            r.round,
            r.workload,
            r.clients,
            if r.pinned { " pinned" } else { "" },
            r.server.label()
        ));
    }
    if settings.durable {
        out.push_str(&durable_text(settings, m, cells));
        let fs = m.disk.as_ref().and_then(|d| d.filesystem.as_ref());
        let tmpfs = fs.is_some_and(|f| matches!(f.fstype.as_str(), "tmpfs" | "ramfs"));
        if tmpfs {
            out.push_str(
                "**The data directories are on a memory filesystem: fdatasync there returns without \
                 writing anything, and these numbers are not of durable commits.**\n\n",
            );
        }
        out.push_str(&format!(
            "Caveats. This is a VM: the data directories' disk is a virtual device, and an fdatasync \
             returns when the hypervisor reports the flush done. Whether that reached stable storage, or a \
             write cache that survives power loss, cannot be seen from inside the VM; the latencies above \
             are what this VM's disk takes, and a disk with slower flushes would lower every number here \
             and make group commit matter more. Disk flushes are counted for the whole device (/proc/\
             diskstats) from just before pgbench starts to just after it exits, its untimed vacuum \
             included, so other processes' syncs are counted too (the load averages are in the settings). \
             The two servers write different things: snapscale logs logical redo records (the new row \
             values) into zero-filled 16 MB WAL segments, keeps its tables in memory, and \
             checkpoints by writing the whole database from an MVCC snapshot; PostgreSQL logs physical \
             changes into preallocated 16 MB segments, with a full-page image of each page at its first \
             change after a checkpoint (full_page_writes on), and writes dirty pages back at checkpoints. \
             Both checkpoint on their default schedules (snapscale: every 5 min or 256 MB of WAL; \
             PostgreSQL: 5 min or 1 GB, spread over 90 % of the interval), so checkpoints can fall inside \
             runs: {}; {}. {} pgbench runs on the same {}-CPU machine as the servers, with at most {} \
             threads (-j). This VM alternates fast and slow phases; the per-round ratios show how far \
             single runs move.\n\n",
            match m.snapscale_checkpoint {
                Some(0) | None =>
                    "snapscale's data directory held no checkpoint after the last run".to_string(),
                Some(redo) => format!(
                    "when the last run ended, snapscale's latest checkpoint started replay {:.0} MB into its \
                     WAL, so at least one had run",
                    redo as f64 / (1 << 20) as f64
                ),
            },
            m.postgres_checkpoints.map_or("PostgreSQL's checkpoints are unknown".into(), |c| format!(
                "PostgreSQL's log shows {} checkpoint(s) started and {} completed before the last run ended",
                c.started, c.completed
            )),
            scale_note(settings),
            thread::available_parallelism().map_or(1, |n| n.get()),
            settings.max_threads
        ));
    } else {
        let branches = if settings.scale == 1 {
            " At scale 1 every tpcb-like transaction updates the single pgbench_branches row, so 2 \
             clients serialize on its row lock on either server."
                .to_string()
        } else {
            format!(
                " At scale {} there are {} pgbench_branches rows, so concurrent tpcb-like clients \
                 rarely wait for each other's row locks.",
                settings.scale, settings.scale
            )
        };
        let pinned = if settings.pinned.is_empty() {
            ""
        } else {
            " Pinned runs share one CPU between pgbench and the server, so no statement waits for \
             another CPU to wake: they measure the work per statement."
        };
        out.push_str(&format!(
            "Caveats. Neither server waits for a disk: snapscale runs with fsync and synchronous_commit \
             off (it appends its WAL to the OS page cache and never syncs it), and PostgreSQL with fsync, \
             synchronous_commit and full_page_writes off, so it too writes WAL and dirty pages to the \
             page cache only. The comparison is of two servers that never wait for a disk, not of \
             durable ones (`lab pgbench --durable` measures those). pgbench runs on the same {}-CPU \
             machine as the server, so at 2 clients the pgbench threads and the server backends share \
             the CPUs.{branches} This VM alternates fast and slow phases; the per-round ratios show how \
             far single runs move. Single-client runs move the most: at every statement one process waits \
             for the other to be woken on an idle CPU, so they include the VM's wake-up latency.{pinned}\n\n",
            thread::available_parallelism().map_or(1, |n| n.get()),
        ));
    }
    let mut columns = vec![
        "workload",
        "clients",
        "pinned",
        "snapscale_tps",
        "postgres_tps",
        "ratio",
        "round_ratios",
        "snapscale_failed",
        "postgres_failed",
    ];
    if settings.durable {
        columns.extend(["snapscale_flushes_per_tx", "postgres_flushes_per_tx"]);
    }
    let mut table = Table::new(&columns);
    for c in cells {
        let mut row = vec![
            Value::from(c.workload),
            Value::from(c.clients),
            Value::from(if c.pinned { "yes" } else { "no" }),
            number_or_na(c.snapscale_tps),
            number_or_na(c.postgres_tps),
            number_or_na(c.ratio),
            Value::from(ratios_text(&c.round_ratios)),
            Value::from(c.snapscale_failed),
            if m.postgres_skipped.is_some() { Value::from("n/a") } else { Value::from(c.postgres_failed) },
        ];
        if settings.durable {
            row.extend([number_or_na(c.snapscale_flushes), number_or_na(c.postgres_flushes)]);
        }
        table.push(row);
    }
    out.push_str(&table.markdown());
    out.push_str("\nEvery run, in the order run, is in the table under the figure and in the CSV.\n");
    out
}

/// What the durable variant's scale means for its numbers.
pub(super) fn scale_note(settings: &Settings) -> String {
    let s = settings.scale;
    if s == 1 {
        return "The scale is 1: every tpcb-like transaction updates the one pgbench_branches row and \
                holds its row lock until its commit is durable, so commits cannot share a sync, whatever \
                the number of clients."
            .into();
    }
    // pgbench's tables and indexes take about 15 MB per unit of scale.
    let big = if s >= 10 && settings.pg_default_shared_buffers {
        format!(
            ", and the scale-{s} database is larger than PostgreSQL's default 128 MB shared_buffers (the \
             OS page cache holds the rest)"
        )
    } else {
        String::new()
    };
    format!(
        "The scale is {s}, not 1 as in docs/results/pgbench.md, so that concurrent clients do not all queue \
         on one pgbench_branches row (see the settings); the numbers are therefore not comparable with \
         that page's tpcb-like cells{big}."
    )
}

/// Settings held as owned values, borrowed as [`flags`] and `show` take
/// them.
pub(crate) fn pairs<'a>(settings: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    settings.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// `-c a=b -c c=d` or `--set a=b --set c=d`.
pub(crate) fn flags(flag: &str, settings: &[(&str, &str)]) -> String {
    settings.iter().map(|(k, v)| format!("{flag} {k}={v}")).collect::<Vec<_>>().join(" ")
}
