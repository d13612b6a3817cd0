//! The Markdown and the figures of `lab standby`: what the numbers show,
//! the tables, the snapshot-cost figure, and bar charts of the visibility
//! cases and the end-to-end runs.

use super::end_to_end::{Backlog, Point, SAMPLE_EVERY};
use super::{find, micro, Row, Settings, MODES};
use crate::report::plot::{Bars, Figure, Panel, Series};

/// The end-to-end half's results, or why it did not run.
pub(super) type EndToEnd = Result<(Vec<Point>, Vec<Backlog>), String>;

fn readers_case(shape: &str, readers: usize) -> String {
    format!("{shape}, {readers} reader{}", if readers == 1 { "" } else { "s" })
}

fn point<'a>(points: &'a [Point], mode: &str, held: usize, clients: usize) -> Option<&'a Point> {
    points.iter().find(|p| p.mode == mode && p.held == held && p.clients == clients)
}

/// "What this shows": the findings, with this run's numbers.
fn findings(settings: &Settings, rows: &[Row], e2e: &EndToEnd) -> String {
    let mut s = String::from("### What this shows\n\n");
    let (low, high) = (
        settings.running.iter().copied().min().unwrap_or(0),
        settings.running.iter().copied().max().unwrap_or(0),
    );
    let one = readers_case(micro::SHAPES[0], 1);
    let csn_all: Vec<f64> =
        rows.iter().filter(|r| r.part == "snapshot" && r.variant == "csn").map(|r| r.value).collect();
    if let (Some(ka_low), Some(ka_high), Some(csn_high)) = (
        find(rows, "snapshot", "known-assigned", &one, low),
        find(rows, "snapshot", "known-assigned", &one, high),
        find(rows, "snapshot", "csn", &one, high),
    ) {
        let (csn_min, csn_max) =
            csn_all.iter().fold((f64::MAX, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        s.push_str(&format!(
            "* **Snapshots.** A `known-assigned` snapshot copies the primary's running xids under the \
             proc-array lock, so its cost grows with them: with 1 reader {ka_low:.0} ns with {low} running \
             and {ka_high:.0} ns with {high} (about {:.2} ns per running xid). A `csn` snapshot reads three \
             numbers and stays at {csn_min:.0}–{csn_max:.0} ns in every case measured (1 or 2 readers, with \
             or without an overflowed subtransaction tree): {:.0}× cheaper at {high}.\n",
            (ka_high - ka_low) / (high - low).max(1) as f64,
            ka_high / csn_high,
        ));
    }
    let vis = |check: &str, case: &str| find(rows, "visibility", check, case, settings.rows);
    if let (Some(ka), Some(plain), Some(memo), Some(ka_sub), Some(memo_sub)) = (
        vis(micro::CHECKS[0], micro::CASES[0]),
        vis(micro::CHECKS[1], micro::CASES[0]),
        vis(micro::CHECKS[2], micro::CASES[0]),
        vis(micro::CHECKS[0], micro::CASES[3]),
        vis(micro::CHECKS[2], micro::CASES[3]),
    ) {
        s.push_str(&format!(
            "* **Visibility checks** reverse the order while the snapshot is small: with one xid running, \
             the `known-assigned` search of the snapshot's xip takes {ka:.1} ns, a CSN-log lookup \
             {plain:.1} ns and the memo {memo:.1} ns ({:.1}× the xip search). When every row was written by a \
             different subxid the array has overflowed, each check maps the subxid to its top through the \
             parent links, and `known-assigned` takes {ka_sub:.1} ns against {memo_sub:.1} ns with the memo. \
             The snapshot's copy is paid once per snapshot, the check once per row version read: which \
             mode wins depends on how many versions a snapshot reads.\n",
            memo / ka
        ));
    }
    match e2e {
        Err(why) => s.push_str(&format!("* The end-to-end part did not run: {why}\n")),
        Ok((points, backlogs)) => {
            let max_held = settings.plan.held.iter().copied().max().unwrap_or(0);
            let ratios: Vec<String> = settings
                .plan
                .held
                .iter()
                .flat_map(|&held| settings.plan.clients.iter().map(move |&c| (held, c)))
                .filter_map(|(held, c)| {
                    let (ka, csn) =
                        (point(points, "known-assigned", held, c)?, point(points, "csn", held, c)?);
                    Some(format!(
                        "{:.2} ({held} held, {c} client{})",
                        csn.standby_tps / ka.standby_tps,
                        if c == 1 { "" } else { "s" }
                    ))
                })
                .collect();
            if let (Some(ka), Some(csn)) =
                (point(points, "known-assigned", max_held, 1), point(points, "csn", max_held, 1))
            {
                s.push_str(&format!(
                    "* **End to end** the difference is small on two cores, where a pgbench select-only \
                     transaction costs tens of µs of which the snapshot is one part: with {max_held} \
                     transactions held open on the primary the standby ran {:.0} tps under `csn` and {:.0} \
                     under `known-assigned` (1 client). Standby tps `csn` ÷ `known-assigned`: {}. The two \
                     modes ran one after the other on a machine shared with other work, so ratios near 1 \
                     are within the noise; only the micro-benchmarks above isolate the snapshot.\n",
                    csn.standby_tps,
                    ka.standby_tps,
                    ratios.join(", ")
                ));
            }
            let max_ms = points.iter().map(|p| p.max_lag_ms).fold(0.0, f64::max);
            let mean_ms = points.iter().map(|p| p.mean_lag_ms).fold(0.0, f64::max);
            let max_kb = points.iter().map(|p| p.max_lag_bytes).max().unwrap_or(0) as f64 / 1e3;
            let catch_up = points.iter().map(|p| p.catch_up_ms).fold(0.0, f64::max);
            s.push_str(&format!(
                "* **Streaming replay {}** with the primary's tpcb-like in both modes: the mean lag of a \
                 run was at most {mean_ms:.1} ms, the largest single sample {max_ms:.0} ms (at most \
                 {max_kb:.0} kB; lag is sampled every {} ms, so a lag reads as up to one interval longer \
                 than it was), and when the load stopped the standby had replayed all of it within \
                 {catch_up:.1} ms. So the replay rates in the end-to-end table are the primary's write \
                 rate, not replay's limit. The largest samples are single intervals, with the standby's \
                 readers and both servers sharing two cores (not measured apart).\n",
                if catch_up < 1000.0 { "keeps up" } else { "falls behind" },
                SAMPLE_EVERY.as_millis()
            ));
            let rate = |b: &Backlog| b.bytes as f64 / 1e6 / b.secs;
            if let (Some(ka), Some(csn)) = (
                backlogs.iter().find(|b| b.mode == "known-assigned"),
                backlogs.iter().find(|b| b.mode == "csn"),
            ) {
                s.push_str(&format!(
                    "* **Replay speed** shows only with a backlog: after a stop of the standby, `csn` \
                     replayed {:.1} MB of tpcb-like WAL at {:.0} MB/s ({:.0} transactions/s) and \
                     `known-assigned` {:.1} MB at {:.0} MB/s ({:.0}/s): `csn` ÷ `known-assigned` = {:.2}, \
                     one sample each of well under a second, so this ratio is the least settled number \
                     here. Replay of a commit in `known-assigned` removes the tree's xids from the sorted \
                     array under the exclusive proc-array lock, in `csn` it stamps the CSN log without a \
                     lock; both also apply the same row versions, which dominate.\n",
                    csn.bytes as f64 / 1e6,
                    rate(csn),
                    csn.transactions as f64 / csn.secs,
                    ka.bytes as f64 / 1e6,
                    rate(ka),
                    ka.transactions as f64 / ka.secs,
                    rate(csn) / rate(ka),
                ));
            }
            if let (Some(none), Some(held)) = (point(points, "csn", 0, 1), point(points, "csn", max_held, 1))
            {
                s.push_str(&format!(
                    "* Held transactions slow the primary's own tpcb-like from {:.0} to {:.0} tps, most \
                     likely because they pin its horizon, so updated rows keep their dead versions (not \
                     measured apart).\n",
                    none.primary_tps, held.primary_tps
                ));
            }
        }
    }
    s.push_str(&format!(
        "\nThe machine has 2 logical CPUs shared with other work: compare the modes within this run \
         (ratios), not with other runs.{}\n\n",
        if settings.repeats == 1 { " This is the `--quick` variant: one repetition per point." } else { "" }
    ));
    s
}

/// The Markdown above the table.
pub(super) fn summary(settings: &Settings, rows: &[Row], e2e: &EndToEnd) -> String {
    let mut s = findings(settings, rows, e2e);
    s.push_str(
        "### Snapshot cost on the standby\n\nns per snapshot (begin, statement snapshot, commit) against the \
         primary transactions known to be running; `known-assigned` copies them, `csn` does not.\n\n",
    );
    let mut seen: Vec<&str> = Vec::new();
    s.push_str(
        "| running | case | known-assigned | csn | known-assigned ÷ csn |\n|---:|---|---:|---:|---:|\n",
    );
    for r in rows.iter().filter(|r| r.part == "snapshot") {
        if seen.contains(&r.case.as_str()) {
            continue;
        }
        for &n in &settings.running {
            if let (Some(ka), Some(csn)) = (
                find(rows, "snapshot", "known-assigned", &r.case, n),
                find(rows, "snapshot", "csn", &r.case, n),
            ) {
                s.push_str(&format!("| {n} | {} | {ka:.0} | {csn:.0} | {:.2} |\n", r.case, ka / csn));
            }
        }
        seen.push(&r.case);
    }
    s.push_str(&format!(
        "\n### Visibility checks on the standby\n\nns per `xid_in_snapshot` over {} rows, {} passes \
         (the memo pays from the second look at an xid); one old transaction still runs, so every probe \
         lies between xmin and xmax.\n\n| case | known-assigned | csn, no memo | csn + memo |\n|---|---:|---:|---:|\n",
        settings.rows, settings.passes
    ));
    for case in micro::CASES {
        let v: Vec<String> = micro::CHECKS
            .iter()
            .map(|c| {
                find(rows, "visibility", c, case, settings.rows).map_or("–".into(), |x| format!("{x:.1}"))
            })
            .collect();
        s.push_str(&format!("| {case} | {} |\n", v.join(" | ")));
    }
    s.push_str(&format!("\n![visibility]({}-visibility.svg)\n", settings.name));
    s.push_str("\n### End to end\n\n");
    match e2e {
        Err(why) => s.push_str(&format!("Not run: {why}\n")),
        Ok((points, backlogs)) => {
            s.push_str(&format!(
                "pgbench select-only on the standby (`-M prepared`, {} s) while the primary runs tpcb-like \
                 (1 client) with `held` extra transactions open; scale {}. Lag sampled every {} ms: in bytes \
                 (the primary's WAL end minus the standby's replay position) and in time (from a sample of \
                 the primary's WAL end until the standby first reported replaying past it). Catch-up: from \
                 the moment the primary's pgbench exited until the standby's replay position reached the \
                 primary's WAL end.\n\n| standby mode | held | clients | standby tps | primary tps | \
                 replay MB/s | replayed tx/s | max lag (kB) | max lag (ms) | mean lag (ms) | catch-up (ms) |\n\
                 |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                settings.plan.seconds,
                settings.plan.scale,
                SAMPLE_EVERY.as_millis()
            ));
            for p in points {
                s.push_str(&format!(
                    "| {} | {} | {} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.1} | {:.1} | {:.1} |\n",
                    p.mode,
                    p.held,
                    p.clients,
                    p.standby_tps,
                    p.primary_tps,
                    p.replay_mb_s,
                    p.replay_tx_s,
                    p.max_lag_bytes as f64 / 1e3,
                    p.max_lag_ms,
                    p.mean_lag_ms,
                    p.catch_up_ms
                ));
            }
            s.push_str(
                "\nReplay of a backlog: the standby stopped (SIGSTOP) while the primary ran tpcb-like with 2 \
                 clients, then resumed (the backlog released) and timed until its replay position reached \
                 the primary's WAL end.\n\n| standby mode | WAL (MB) | transactions | catch-up (s) | MB/s | \
                 tx/s |\n|---|---:|---:|---:|---:|---:|\n",
            );
            for b in backlogs {
                s.push_str(&format!(
                    "| {} | {:.1} | {} | {:.2} | {:.1} | {:.0} |\n",
                    b.mode,
                    b.bytes as f64 / 1e6,
                    b.transactions,
                    b.secs,
                    b.bytes as f64 / 1e6 / b.secs,
                    b.transactions as f64 / b.secs
                ));
            }
            s.push_str(&format!(
                "\n![end to end]({0}-end-to-end.svg)\n\n![replay lag]({0}-lag.svg)\n",
                settings.name
            ));
        }
    }
    s.push_str("\n### All measurements\n");
    s
}

/// Snapshot cost against the running transactions (the page's figure).
pub(super) fn figure(settings: &Settings, rows: &[Row]) -> Figure {
    let panels = micro::SHAPES
        .iter()
        .map(|&shape| Panel {
            title: shape.to_string(),
            series: settings
                .readers
                .iter()
                .flat_map(|&readers| MODES.iter().map(move |&(mode, _)| (readers, mode)))
                .map(|(readers, mode)| {
                    let case = readers_case(shape, readers);
                    Series {
                        label: format!("{mode}, {readers} reader{}", if readers == 1 { "" } else { "s" }),
                        points: settings
                            .running
                            .iter()
                            .filter_map(|&n| {
                                find(rows, "snapshot", mode, &case, n).map(|v| (n.max(1) as f64, v))
                            })
                            .collect(),
                    }
                })
                .collect(),
        })
        .collect();
    Figure {
        title: "Standby snapshot cost: KnownAssignedXids vs CSN".into(),
        x_label: "primary transactions running (0 drawn at 1)".into(),
        y_label: "ns per snapshot".into(),
        x_log: true,
        y_log: true,
        panels,
    }
}

/// The visibility cases and the end-to-end runs as bar charts, with the
/// suffix of each file's name.
pub(super) fn extra_figures(
    settings: &Settings,
    rows: &[Row],
    points: &[Point],
) -> Vec<(&'static str, Bars)> {
    let visibility = Bars {
        title: "Visibility checks on the standby".into(),
        y_label: "ns per check".into(),
        cases: micro::CASES.iter().map(|c| c.to_string()).collect(),
        series: micro::CHECKS
            .iter()
            .map(|&check| {
                let values = micro::CASES
                    .iter()
                    .map(|case| find(rows, "visibility", check, case, settings.rows).unwrap_or(f64::NAN))
                    .collect();
                (check.to_string(), values)
            })
            .collect(),
    };
    let mut figures = vec![("visibility", visibility)];
    if points.is_empty() {
        return figures;
    }
    let cases: Vec<(usize, usize)> = settings
        .plan
        .held
        .iter()
        .flat_map(|&held| settings.plan.clients.iter().map(move |&c| (held, c)))
        .collect();
    let by_mode = |value: fn(&Point) -> f64| -> Vec<(String, Vec<f64>)> {
        MODES
            .iter()
            .map(|&(mode, _)| {
                let values = cases
                    .iter()
                    .map(|&(held, c)| point(points, mode, held, c).map_or(f64::NAN, value))
                    .collect();
                (mode.to_string(), values)
            })
            .collect()
    };
    let names: Vec<String> = cases
        .iter()
        .map(|&(held, c)| format!("{held} held, {c} client{}", if c == 1 { "" } else { "s" }))
        .collect();
    figures.push((
        "end-to-end",
        Bars {
            title: "pgbench select-only on the standby while the primary runs tpcb-like".into(),
            y_label: "standby tps".into(),
            cases: names.clone(),
            series: by_mode(|p| p.standby_tps),
        },
    ));
    figures.push((
        "lag",
        Bars {
            title: "Replay lag during those runs (largest sample)".into(),
            y_label: "ms".into(),
            cases: names,
            series: by_mode(|p| p.max_lag_ms),
        },
    ));
    figures
}
