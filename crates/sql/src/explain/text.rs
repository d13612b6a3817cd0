//! EXPLAIN's text format: one line per row of the QUERY PLAN column, a
//! node's children under `->  `, each level two more spaces in, its
//! details two spaces past its name.

use super::tree::{PlanNode, Prop};
use super::{ExplainOptions, Stats};

/// The lines of `root`'s plan.
pub(crate) fn render(root: &PlanNode, o: &ExplainOptions, stats: Option<&Stats>) -> Vec<String> {
    let mut lines = Vec::new();
    node(root, 0, o, stats, &mut lines);
    lines
}

fn spaces(indent: usize) -> String {
    " ".repeat(indent * 2)
}

fn node(n: &PlanNode, mut indent: usize, o: &ExplainOptions, stats: Option<&Stats>, lines: &mut Vec<String>) {
    if let Some(name) = &n.subplan_name {
        lines.push(format!("{}{name}", spaces(indent)));
        indent += 1;
    }
    let mut line = String::new();
    if indent > 0 {
        line = format!("{}->  ", spaces(indent));
        indent += 2;
    }
    line += &n.heading;
    indent += 1;
    if o.costs {
        let c = &n.cost;
        line += &format!("  (cost={:.2}..{:.2} rows={:.0} width={})", c.startup, c.total, c.rows, c.width);
    }
    if let Some(stats) = stats {
        match n.key.and_then(|k| stats.get(&k)).filter(|s| s.loops > 0) {
            Some(s) => {
                let loops = s.loops as f64;
                let rows = s.rows as f64 / loops;
                if o.timing {
                    line += &format!(
                        " (actual time={:.3}..{:.3} rows={rows:.0} loops={loops:.0})",
                        s.startup.as_secs_f64() * 1000.0 / loops,
                        s.total.as_secs_f64() * 1000.0 / loops
                    );
                } else {
                    line += &format!(" (actual rows={rows:.0} loops={loops:.0})");
                }
            }
            None => line += " (never executed)",
        }
    }
    lines.push(line);
    if o.verbose && !n.output.is_empty() {
        lines.push(format!("{}Output: {}", spaces(indent), n.output.join(", ")));
    }
    for (label, value) in &n.details {
        let value = match value {
            Prop::Text(t) => t.clone(),
            Prop::List(l) => l.join(", "),
        };
        lines.push(format!("{}{label}: {value}", spaces(indent)));
    }
    for child in n.initplans.iter().chain(&n.children).chain(&n.subplans) {
        node(child, indent, o, stats, lines);
    }
}
