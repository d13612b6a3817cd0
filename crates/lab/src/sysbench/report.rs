//! From runs to the report: per-cell medians and ratios, the bar chart
//! and the Markdown summary.

use super::measure::{Measurement, Run};
use super::Settings;
use crate::pgbench::report::{fmt_opt, number_or_na, ratios_text};
use crate::pgbench::servers::Kind;
use crate::report::plot::Bars;
use crate::report::stats::median;
use crate::report::table::{Table, Value};

/// One (test, threads) cell's summary over the pairs.
#[derive(Clone, Debug)]
pub(super) struct Cell {
    pub(super) test: String,
    pub(super) threads: usize,
    /// Median tps over pairs.
    pub(super) snapscale_tps: Option<f64>,
    pub(super) postgres_tps: Option<f64>,
    /// Median average latency over pairs, ms.
    pub(super) snapscale_latency_ms: Option<f64>,
    pub(super) postgres_latency_ms: Option<f64>,
    /// Median of the per-pair ratios snapscale / PostgreSQL.
    pub(super) ratio: Option<f64>,
    /// The per-pair ratios, in pair order: their spread is the honest
    /// error bar on this VM.
    pub(super) pair_ratios: Vec<f64>,
    /// Retried errors over all pairs (deadlocks, serialization failures).
    pub(super) snapscale_ignored: u64,
    pub(super) postgres_ignored: u64,
    /// Runs that failed or reported a problem, over both servers.
    pub(super) troubled_runs: usize,
}

pub(super) fn cells(settings: &Settings, runs: &[Run]) -> Vec<Cell> {
    let mut cells = Vec::new();
    for test in &settings.tests {
        for &threads in &settings.threads {
            let of = |kind: Kind| -> Vec<&Run> {
                runs.iter().filter(|r| &r.test == test && r.threads == threads && r.server == kind).collect()
            };
            let ok = |kind: Kind| -> Vec<&super::Outcome> {
                of(kind).into_iter().filter_map(|r| r.result.as_ref().ok()).collect()
            };
            let median_of = |v: Vec<f64>| (!v.is_empty()).then(|| median(v));
            let tps = |kind: Kind| median_of(ok(kind).iter().map(|o| o.tps).collect());
            let latency = |kind: Kind| median_of(ok(kind).iter().map(|o| o.latency_avg_ms).collect());
            let ignored = |kind: Kind| ok(kind).iter().map(|o| o.ignored_errors).sum();
            let pair_ratios: Vec<f64> = (1..=settings.pairs)
                .filter_map(|pair| {
                    let in_pair = |kind: Kind| {
                        of(kind)
                            .iter()
                            .find(|r| r.pair == pair)
                            .and_then(|r| r.result.as_ref().ok())
                            .map(|o| o.tps)
                    };
                    Some(in_pair(Kind::Snapscale)? / in_pair(Kind::Postgres)?)
                })
                .collect();
            let troubled_runs = runs
                .iter()
                .filter(|r| &r.test == test && r.threads == threads)
                .filter(|r| r.result.as_ref().map_or(true, |o| o.problem.is_some()))
                .count();
            cells.push(Cell {
                test: test.clone(),
                threads,
                snapscale_tps: tps(Kind::Snapscale),
                postgres_tps: tps(Kind::Postgres),
                snapscale_latency_ms: latency(Kind::Snapscale),
                postgres_latency_ms: latency(Kind::Postgres),
                ratio: median_of(pair_ratios.clone()),
                pair_ratios,
                snapscale_ignored: ignored(Kind::Snapscale),
                postgres_ignored: ignored(Kind::Postgres),
                troubled_runs,
            });
        }
    }
    cells
}

/// The ratio per test, one bar per thread count.
pub(super) fn bars(settings: &Settings, cells: &[Cell]) -> Bars {
    Bars {
        title: "sysbench: snapscale tps / PostgreSQL 15 tps (median of pairs; 1 = parity)".into(),
        y_label: "ratio".into(),
        cases: settings.tests.iter().map(|t| t.strip_prefix("oltp_").unwrap_or(t).to_owned()).collect(),
        series: settings
            .threads
            .iter()
            .map(|&threads| {
                let values = settings
                    .tests
                    .iter()
                    .map(|test| {
                        cells
                            .iter()
                            .find(|c| &c.test == test && c.threads == threads)
                            .and_then(|c| c.ratio)
                            .unwrap_or(f64::NAN)
                    })
                    .collect();
                (format!("{threads} threads"), values)
            })
            .collect(),
    }
}

/// The page's results: the table of medians and ratios, then which cells
/// are below parity and which runs had trouble.
pub(super) fn summary(settings: &Settings, m: &Measurement, cells: &[Cell]) -> String {
    let mut out = format!(
        "Median over {} pair{} of sysbench's transactions per second (its `transactions:` line) and \
         average latency; the ratio is snapscale's tps over PostgreSQL's within a pair, its median over \
         pairs, with every pair's ratio beside it.\n\n",
        settings.pairs,
        if settings.pairs == 1 { "" } else { "s" }
    );
    let mut table = Table::new(&[
        "test",
        "threads",
        "snapscale_tps",
        "postgres_tps",
        "ratio",
        "pair_ratios",
        "snapscale_latency_ms",
        "postgres_latency_ms",
        "ignored_errors (snapscale / PostgreSQL)",
    ]);
    for c in cells {
        table.push(vec![
            Value::from(c.test.as_str()),
            Value::from(c.threads),
            number_or_na(c.snapscale_tps),
            number_or_na(c.postgres_tps),
            Value::from(c.ratio.map_or("n/a".into(), |r| format!("**{r:.2}**"))),
            Value::from(ratios_text(&c.pair_ratios)),
            number_or_na(c.snapscale_latency_ms),
            number_or_na(c.postgres_latency_ms),
            Value::from(format!("{} / {}", c.snapscale_ignored, c.postgres_ignored)),
        ]);
    }
    out.push_str(&table.markdown());
    out.push('\n');
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Some(note) = busy_note(&m.load, cpus) {
        out.push_str(&note);
    }
    if m.postgres_skipped.is_some() {
        out.push_str("PostgreSQL 15 was not measured (see its settings line): there are no ratios.\n\n");
        return out;
    }
    let below: Vec<String> = cells
        .iter()
        .filter_map(|c| {
            let r = c.ratio?;
            (r < 1.0).then(|| format!("{} at {} threads ({})", c.test, c.threads, fmt_opt(Some(r), 2)))
        })
        .collect();
    out.push_str(&if below.is_empty() {
        "**Below 1.0×:** none.\n\n".to_string()
    } else {
        format!("**Below 1.0×:** {}.\n\n", below.join(", "))
    });
    let troubled: Vec<String> = m
        .runs
        .iter()
        .filter_map(|r| {
            let why = match &r.result {
                Err(why) => why.lines().next().unwrap_or_default().to_owned(),
                Ok(o) => o.problem.clone()?,
            };
            Some(format!("- pair {} {} threads={} {}: {why}", r.pair, r.test, r.threads, r.server.label()))
        })
        .collect();
    if !troubled.is_empty() {
        out.push_str(&format!("**Runs that failed or reported errors:**\n\n{}\n\n", troubled.join("\n")));
    }
    let troubled_cells = cells.iter().filter(|c| c.troubled_runs > 0).count();
    if troubled_cells > 0 {
        out.push_str(&format!(
            "{troubled_cells} cell(s) had a failed run; their medians use the others.\n\n"
        ));
    }
    out
}

/// A warning when the 1-minute load average before or after the runs
/// exceeded the CPUs: other work then shared them with both servers and
/// sysbench, and the ratios are not those of a quiet machine.
pub(super) fn busy_note((before, after): &(String, String), cpus: usize) -> Option<String> {
    let one_minute = |load: &str| load.split_whitespace().next()?.parse::<f64>().ok();
    let most = one_minute(before).into_iter().chain(one_minute(after)).fold(f64::NAN, f64::max);
    (most > cpus as f64).then(|| {
        format!(
            "**The machine was busy:** the 1-minute load average was {} before the servers started \
             and {} after the last run, on {cpus} logical CPUs. Other work shared the CPUs with both \
             servers and sysbench, so these ratios are not those of a quiet machine.\n\n",
            one_minute(before).map_or("unknown".into(), |l| format!("{l:.1}")),
            one_minute(after).map_or("unknown".into(), |l| format!("{l:.1}")),
        )
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::sysbench::Outcome;

    fn run(pair: usize, server: Kind, tps: f64) -> Run {
        Run {
            pair,
            test: "oltp_point_select".into(),
            threads: 2,
            server,
            result: Ok(Outcome {
                tps,
                qps: tps,
                transactions: 10,
                latency_avg_ms: 1.0,
                latency_p95_ms: 2.0,
                ignored_errors: 1,
                problem: None,
            }),
        }
    }

    #[test]
    fn ratios_are_taken_within_a_pair() {
        let settings = Settings {
            pairs: 3,
            tests: vec!["oltp_point_select".into(), "oltp_insert".into()],
            ..Settings::quick(PathBuf::from("unused"))
        };
        let runs = vec![
            run(1, Kind::Snapscale, 100.0),
            run(1, Kind::Postgres, 200.0),
            run(2, Kind::Postgres, 50.0),
            run(2, Kind::Snapscale, 100.0),
            run(3, Kind::Snapscale, 90.0),
            Run { result: Err("gone".into()), ..run(3, Kind::Postgres, 0.0) },
        ];
        let c = &cells(&settings, &runs)[0];
        assert_eq!((c.snapscale_tps, c.postgres_tps), (Some(100.0), Some(125.0)));
        // Pairs give 0.5 and 2.0 (the third has no PostgreSQL run): the
        // median of the ratios, not the ratio of the medians (0.8).
        assert_eq!(c.ratio, Some(1.25));
        assert_eq!(ratios_text(&c.pair_ratios), "0.50, 2.00");
        assert_eq!((c.snapscale_ignored, c.postgres_ignored, c.troubled_runs), (3, 2, 1));
        let chart = bars(&settings, &cells(&settings, &runs));
        assert_eq!(chart.cases, ["point_select", "insert"]);
        assert_eq!(chart.series.len(), 1);
        assert_eq!(chart.series[0].1[0], 1.25);
        assert!(chart.series[0].1[1].is_nan(), "oltp_insert had no runs");
    }

    #[test]
    fn a_busy_machine_is_named() {
        let load = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(busy_note(&load("0.50 0.40 0.30", "1.90 1.00 0.50"), 2), None);
        let note = busy_note(&load("11.79 12.59 12.54", "33.04 28.17 23.14"), 2).expect("busy");
        assert!(
            note.contains("11.8 before") && note.contains("33.0 after") && note.contains("2 logical CPUs")
        );
        assert!(busy_note(&load("unknown", "3.5 1 1"), 2).is_some_and(|n| n.contains("unknown before")));
        assert_eq!(busy_note(&load("unknown", "unknown"), 2), None);
    }

    #[test]
    fn postgres_is_sized_to_hold_the_data_set() {
        let full = Settings::full(PathBuf::from("unused"));
        assert_eq!(full.shared_buffers_mb(), 128, "25 000 rows fit PostgreSQL's default");
        let big = Settings { tables: 8, table_size: 1_000_000, ..full.clone() };
        assert_eq!(big.shared_buffers_mb(), 4577);
        assert!(big.postgres_settings().contains(&("shared_buffers", "4577MB".into())));
        let many = Settings { threads: vec![2, 200], ..full };
        assert_eq!(many.max_connections(), 210);
    }
}
