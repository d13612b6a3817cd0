//! EXPLAIN (FORMAT JSON): PostgreSQL's structure (an array of one object
//! holding "Plan", each node's "Node Type", its properties, "Plans"),
//! laid out as PostgreSQL lays it out.

use super::tree::{PlanNode, Prop};
use super::{ExplainOptions, Stats};

/// A JSON value as the layout needs it.
enum J {
    Obj(Vec<(String, J)>),
    Arr(Vec<J>),
    /// Written as it is (numbers, Booleans, inline string lists).
    Raw(String),
}

fn string(s: &str) -> J {
    J::Raw(quote(s))
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out += "\\\"",
            '\\' => out += "\\\\",
            '\n' => out += "\\n",
            '\r' => out += "\\r",
            '\t' => out += "\\t",
            c if (c as u32) < 0x20 => out += &format!("\\u{:04x}", c as u32),
            c => out.push(c),
        }
    }
    out + "\""
}

fn prop(p: &Prop) -> J {
    match p {
        Prop::Text(t) => string(t),
        Prop::List(l) => J::Raw(format!("[{}]", l.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", "))),
    }
}

fn write(j: &J, indent: usize, out: &mut String) {
    let pad = |n: usize| " ".repeat(n);
    match j {
        J::Raw(s) => out.push_str(s),
        J::Obj(fields) => {
            out.push('{');
            for (i, (k, v)) in fields.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.push_str(&pad(indent + 2));
                out.push_str(&quote(k));
                out.push_str(": ");
                write(v, indent + 2, out);
            }
            out.push('\n');
            out.push_str(&pad(indent));
            out.push('}');
        }
        J::Arr(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                out.push_str(if i == 0 { "\n" } else { ",\n" });
                out.push_str(&pad(indent + 2));
                write(v, indent + 2, out);
            }
            out.push('\n');
            out.push_str(&pad(indent));
            out.push(']');
        }
    }
}

fn node(n: &PlanNode, o: &ExplainOptions, stats: Option<&Stats>) -> J {
    let mut f: Vec<(String, J)> = vec![("Node Type".into(), string(n.node_type))];
    for (k, v) in &n.kind_props {
        f.push(((*k).into(), prop(v)));
    }
    if let Some(r) = n.relationship {
        f.push(("Parent Relationship".into(), string(r)));
    }
    if let Some(s) = &n.subplan_name {
        f.push(("Subplan Name".into(), string(s)));
    }
    f.push(("Parallel Aware".into(), J::Raw("false".into())));
    f.push(("Async Capable".into(), J::Raw("false".into())));
    for (k, v) in &n.target_props {
        f.push(((*k).into(), prop(v)));
    }
    if o.costs {
        let c = &n.cost;
        f.push(("Startup Cost".into(), J::Raw(format!("{:.2}", c.startup))));
        f.push(("Total Cost".into(), J::Raw(format!("{:.2}", c.total))));
        f.push(("Plan Rows".into(), J::Raw(format!("{:.0}", c.rows))));
        f.push(("Plan Width".into(), J::Raw(c.width.to_string())));
    }
    if let Some(stats) = stats {
        let s = n.key.and_then(|k| stats.get(&k)).filter(|s| s.loops > 0);
        let loops = s.map_or(0.0, |s| s.loops as f64);
        let per = |v: f64| if loops > 0.0 { v / loops } else { 0.0 };
        if o.timing {
            let ms = |d: Option<std::time::Duration>| per(d.map_or(0.0, |d| d.as_secs_f64() * 1000.0));
            f.push(("Actual Startup Time".into(), J::Raw(format!("{:.3}", ms(s.map(|s| s.startup))))));
            f.push(("Actual Total Time".into(), J::Raw(format!("{:.3}", ms(s.map(|s| s.total))))));
        }
        f.push(("Actual Rows".into(), J::Raw(format!("{:.0}", per(s.map_or(0.0, |s| s.rows as f64))))));
        f.push(("Actual Loops".into(), J::Raw(format!("{loops:.0}"))));
    }
    if o.verbose && !n.output.is_empty() {
        f.push(("Output".into(), prop(&Prop::List(n.output.clone()))));
    }
    for (k, v) in &n.details {
        f.push(((*k).into(), prop(v)));
    }
    let children: Vec<J> =
        n.initplans.iter().chain(&n.children).chain(&n.subplans).map(|c| node(c, o, stats)).collect();
    if !children.is_empty() {
        f.push(("Plans".into(), J::Arr(children)));
    }
    J::Obj(f)
}

/// The one text value of the plan, with ANALYZE's times when `summary`
/// holds them (planning and execution, in milliseconds).
pub(crate) fn render(
    root: &PlanNode,
    o: &ExplainOptions,
    stats: Option<&Stats>,
    summary: Option<(f64, f64)>,
) -> String {
    let mut top = vec![("Plan".to_owned(), node(root, o, stats))];
    if let Some((planning, _)) = summary {
        top.push(("Planning Time".into(), J::Raw(format!("{planning:.3}"))));
    }
    if stats.is_some() {
        top.push(("Triggers".into(), J::Arr(Vec::new())));
    }
    if let Some((_, execution)) = summary {
        top.push(("Execution Time".into(), J::Raw(format!("{execution:.3}"))));
    }
    let mut out = String::new();
    write(&J::Arr(vec![J::Obj(top)]), 0, &mut out);
    out
}
