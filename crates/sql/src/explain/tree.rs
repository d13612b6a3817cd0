//! The plan EXPLAIN shows, built from the physical plan the executor
//! runs: each operator under PostgreSQL's name for the node that does the
//! same work, its expressions written out over its input's columns, and
//! its estimated cost (cost.rs).
//!
//! Two operators have no node of their own in PostgreSQL and are folded
//! into the node below: a Project is that node's target list (its
//! `Output` under VERBOSE), and a Filter is its `Filter` line (a node that
//! takes no qualification in PostgreSQL is shown under a Result that
//! filters). A hash join's build side is shown under a Hash node, and a
//! nested loop's inner scan, whose rows the executor computes once and
//! keeps, under a Materialize, as PostgreSQL shows the same work.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ops::Bound;

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::deparse::{and_of, ident, Col, Deparser};
use super::estimates::{self, Scanned, Tables};
use crate::expr::{Expr, SubKind};
use crate::plan::cost::{self, Cost};
use crate::plan::physical::{Access, IndexArm, JoinNode, Node, Query, ScanNode, Source, Statement};
use crate::plan::selectivity::{self, TableInfo};
use crate::plan::{JoinKind, SetOpKind, Srf};
use crate::stack::StackDepth;

/// A value of a node's property.
#[derive(Clone, Debug)]
pub(crate) enum Prop {
    Text(String),
    List(Vec<String>),
}

/// One node of the plan shown.
#[derive(Debug)]
pub(crate) struct PlanNode {
    /// PostgreSQL's node type (FORMAT JSON's "Node Type").
    pub node_type: &'static str,
    /// The text format's first words ("Hash Left Join", "Seq Scan on t").
    pub heading: String,
    /// FORMAT JSON's properties before "Parent Relationship" (Strategy,
    /// Operation).
    pub kind_props: Vec<(&'static str, Prop)>,
    /// FORMAT JSON's properties of the scan target or join type.
    pub target_props: Vec<(&'static str, Prop)>,
    pub relationship: Option<&'static str>,
    pub subplan_name: Option<String>,
    pub cost: Cost,
    /// Where the executor's counts for this node are kept (its address).
    pub key: Option<usize>,
    pub output: Vec<String>,
    pub details: Vec<(&'static str, Prop)>,
    pub initplans: Vec<PlanNode>,
    pub children: Vec<PlanNode>,
    pub subplans: Vec<PlanNode>,
}

impl PlanNode {
    fn new(node_type: &'static str, heading: impl Into<String>) -> PlanNode {
        PlanNode {
            node_type,
            heading: heading.into(),
            kind_props: Vec::new(),
            target_props: Vec::new(),
            relationship: None,
            subplan_name: None,
            cost: Cost::default(),
            key: None,
            output: Vec::new(),
            details: Vec::new(),
            initplans: Vec::new(),
            children: Vec::new(),
            subplans: Vec::new(),
        }
    }

    fn child(mut self, relationship: &'static str) -> PlanNode {
        self.relationship = Some(relationship);
        self
    }

    fn text(&mut self, label: &'static str, value: String) {
        self.details.push((label, Prop::Text(value)));
    }

    /// Whether PostgreSQL's node of this type can carry a Filter.
    fn takes_filter(&self) -> bool {
        !matches!(
            self.node_type,
            "Sort"
                | "Limit"
                | "Hash"
                | "Materialize"
                | "Unique"
                | "LockRows"
                | "Append"
                | "Recursive Union"
                | "WindowAgg"
                | "ProjectSet"
                | "SetOp"
                | "ModifyTable"
        )
    }
}

/// The index, probes and left row's columns of an index join's inner
/// scan.
type Via<'b> = (&'b std::sync::Arc<snapscale_engine::index::Index>, &'b [Expr], &'b [Col]);

/// A node built, with its output row's columns and their widths.
struct Built {
    node: PlanNode,
    cols: Vec<Col>,
    widths: Vec<u32>,
}

/// Builds the plan shown for one statement.
pub(crate) struct Builder<'a> {
    subplans: &'a [Query],
    verbose: bool,
    /// Columns are qualified by their relation's name in join and upper
    /// nodes (the statement reads more than one relation, or VERBOSE).
    prefix: bool,
    /// Output lists are qualified only where the statement reads more
    /// than one relation.
    tlist_prefix: bool,
    /// The statement's FROM items as written (relation name, alias), in
    /// order, each taken by the first scan of its relation.
    aliases: Vec<(String, String, bool)>,
    /// The names already given to scans, for unique ones.
    names_used: HashMap<String, usize>,
    rendered: HashSet<usize>,
    /// The subplans referenced by the expressions being written.
    referenced: RefCell<Vec<(usize, bool, Vec<String>)>>,
    /// The enclosing rows' values of the subplans being built, innermost
    /// last.
    outer: Vec<Vec<String>>,
    /// The index join's equalities, as its join condition writes them.
    index_join_conds: Vec<String>,
    work_tables: HashMap<usize, (Vec<Col>, Vec<u32>)>,
    /// The tables scanned so far, by the name their columns carry, for
    /// the upper nodes' estimates.
    tables: Tables,
    stack: StackDepth,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(
        statement: &Statement,
        subplans: &'a [Query],
        verbose: bool,
        aliases: Vec<(String, String)>,
        stack: StackDepth,
    ) -> Builder<'a> {
        let mut relations = 0;
        count_relations_in(statement, &mut relations);
        for q in subplans {
            count_relations(&q.root, &mut relations);
        }
        Builder {
            subplans,
            verbose,
            prefix: verbose || relations > 1,
            tlist_prefix: relations > 1,
            aliases: aliases.into_iter().map(|(n, a)| (n, a, false)).collect(),
            names_used: HashMap::new(),
            rendered: HashSet::new(),
            referenced: RefCell::new(Vec::new()),
            work_tables: HashMap::new(),
            tables: Tables::new(),
            outer: Vec::new(),
            index_join_conds: Vec::new(),
            stack,
        }
    }

    /// The plan of `statement`.
    pub(crate) fn statement(&mut self, statement: &Statement) -> Result<PlanNode, SqlError> {
        let key = Some(statement as *const Statement as usize);
        let modify =
            |b: &mut Builder<'_>, op: &'static str, rel: &crate::plan::Rel, name: String, child: Built| {
                let mut node =
                    PlanNode::new("ModifyTable", format!("{op} on {}", b.target(&rel.entry.name, &name)));
                node.kind_props.push(("Operation", Prop::Text(op.into())));
                node.target_props = b.target_props(&rel.entry.name, &name);
                node.cost = cost::modify(&child.node.cost);
                node.key = key;
                node.children.push(child.node.child("Outer"));
                node
            };
        Ok(match statement {
            Statement::Query(q) => {
                let mut built = self.node(&q.root)?;
                // A column read from a table has its width from below
                // (its statistics'); others their types' widths.
                built.node.cost.width = q
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| match (built.cols.get(i), built.widths.get(i)) {
                        (Some(Col::Var { .. }), Some(&w)) if built.cols.len() == q.columns.len() => w,
                        _ => cost::type_width(c.ty),
                    })
                    .sum();
                built.node
            }
            Statement::Insert { rel, source, on_conflict, .. } => {
                // The target is the first relation PostgreSQL's range
                // table holds: it takes its name first.
                let name = self.scan_name(&rel.entry.name);
                let child = match source {
                    Source::Values(rows) if rows.len() == 1 => {
                        let mut n = PlanNode::new("Result", "Result");
                        n.cost = cost::result();
                        n.cost.width = rel.entry.columns.iter().map(|c| cost::type_width(c.ty)).sum();
                        n.key = key.map(|k| k + 1);
                        Built { node: n, cols: Vec::new(), widths: Vec::new() }
                    }
                    Source::Values(rows) => self.values(rows, key.map(|k| k + 1))?,
                    Source::Query(q) => self.node(&q.root)?,
                };
                let mut node = modify(self, "Insert", rel, name, child);
                if let Some(c) = on_conflict {
                    let resolution = match c.action {
                        crate::plan::ConflictAction::Nothing => "NOTHING",
                        crate::plan::ConflictAction::Update { .. } => "UPDATE",
                    };
                    node.text("Conflict Resolution", resolution.into());
                    let names: Vec<String> = c
                        .arbiters
                        .iter()
                        .filter_map(|&i| rel.entry.indexes.get(i))
                        .map(|d| d.name.clone())
                        .collect();
                    node.details.push(("Conflict Arbiter Indexes", Prop::List(names)));
                }
                node
            }
            Statement::Update { scan, .. } => {
                let child = self.scan(scan, None)?;
                let name = self.target_name(&scan.rel);
                modify(self, "Update", &scan.rel, name, child)
            }
            Statement::Delete { scan, .. } => {
                let child = self.scan(scan, None)?;
                let name = self.target_name(&scan.rel);
                modify(self, "Delete", &scan.rel, name, child)
            }
            Statement::ModifyJoin(m) => {
                let child = self.node(&m.query.root)?;
                let name = self.target_name(&m.rel);
                modify(self, if m.delete { "Delete" } else { "Update" }, &m.rel, name, child)
            }
            Statement::InsteadOf(m) => {
                let child = self.node(&m.query.root)?;
                let name = self.target_name(&m.view);
                modify(self, if m.delete { "Delete" } else { "Update" }, &m.view, name, child)
            }
            Statement::Merge(m) => {
                let child = self.node(&m.join.root)?;
                let name = self.target_name(&m.rel);
                modify(self, "Merge", &m.rel, name, child)
            }
            Statement::CreateTableAs(c) => self.node(&c.query.root)?.node,
            Statement::With(w) => {
                let mut main = self.statement(&w.main)?;
                for (k, (_, item)) in w.items.iter().enumerate() {
                    let mut n = self.statement(item)?.child("InitPlan");
                    n.subplan_name = Some(format!("CTE {}", k + 1));
                    main.initplans.push(n);
                }
                main
            }
            Statement::Utility(_) | Statement::CopyQuery { .. } => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "EXPLAIN of this statement is not supported",
                ))
            }
        })
    }

    /// The name a scan of relation `relname` is shown under: the alias it
    /// was written with, else its own name, made unique in the plan.
    fn scan_name(&mut self, relname: &str) -> String {
        let written = self.aliases.iter_mut().find(|(n, _, used)| !*used && n == relname).map(|e| {
            e.2 = true;
            e.1.clone()
        });
        let base = written.unwrap_or_else(|| relname.to_owned());
        let count = self.names_used.entry(base.clone()).or_insert(0);
        *count += 1;
        if *count == 1 {
            base
        } else {
            format!("{base}_{}", *count - 1)
        }
    }

    /// The name of an UPDATE's or DELETE's target: its scan's (one range
    /// table entry in PostgreSQL).
    fn target_name(&self, rel: &crate::plan::Rel) -> String {
        self.aliases
            .iter()
            .find(|(n, _, _)| *n == rel.entry.name)
            .map_or_else(|| rel.entry.name.clone(), |(_, a, _)| a.clone())
    }

    /// `t`, `t alias`, or under VERBOSE `public.t alias`.
    fn target(&self, relname: &str, alias: &str) -> String {
        let mut s = if self.verbose { format!("public.{}", ident(relname)) } else { ident(relname) };
        if alias != relname {
            s += " ";
            s += &ident(alias);
        }
        s
    }

    fn target_props(&self, relname: &str, alias: &str) -> Vec<(&'static str, Prop)> {
        let mut props = vec![("Relation Name", Prop::Text(relname.to_owned()))];
        if self.verbose {
            props.push(("Schema", Prop::Text("public".into())));
        }
        props.push(("Alias", Prop::Text(alias.to_owned())));
        props
    }

    /// A node's own output columns written out (a computed one as its
    /// expression, without the parentheses of a reference to it).
    fn written(&self, cols: &[Col]) -> Vec<String> {
        cols.iter()
            .filter(|c| !is_ctid(c))
            .map(|c| match c {
                Col::Expr(text) | Col::Raw(text) => text.clone(),
                var => self.with_deparser(std::slice::from_ref(var), self.tlist_prefix, |d| {
                    d.expr(&Expr::Column(0))
                }),
            })
            .collect()
    }

    /// A deparser over `cols`, recording the subplans it names.
    fn with_deparser<T>(&self, cols: &[Col], prefix: bool, f: impl FnOnce(&Deparser<'_>) -> T) -> T {
        let name = |plan: usize, kind: &SubKind, uncorrelated: bool, args: Vec<String>| {
            let init = uncorrelated
                && matches!(
                    kind,
                    SubKind::Exists | SubKind::Scalar | SubKind::Array | SubKind::ArrayOfArrays
                );
            self.referenced.borrow_mut().push((plan, init, args));
            if init {
                format!("${plan}")
            } else {
                subplan_ref(plan, kind, uncorrelated)
            }
        };
        let outer = self.outer.last().map_or(&[][..], Vec::as_slice);
        f(&Deparser { cols, prefix, sublinks: &name, outer, upper_prefix: self.prefix })
    }

    /// Puts the subplans the node's expressions named under it.
    fn attach_subplans(&mut self, node: &mut PlanNode) -> Result<(), SqlError> {
        let referenced = std::mem::take(&mut *self.referenced.borrow_mut());
        for (plan, init, args) in referenced {
            if !self.rendered.insert(plan) {
                continue;
            }
            let Some(q) = self.subplans.get(plan) else { continue };
            self.outer.push(args);
            let built = self.node(&q.root);
            self.outer.pop();
            let mut built = built?.node;
            if init {
                built.relationship = Some("InitPlan");
                built.subplan_name = Some(format!("InitPlan {} (returns ${plan})", plan + 1));
                node.initplans.push(built);
            } else {
                built.relationship = Some("SubPlan");
                built.subplan_name = Some(format!("SubPlan {}", plan + 1));
                node.subplans.push(built);
            }
        }
        Ok(())
    }

    fn node(&mut self, n: &Node) -> Result<Built, SqlError> {
        self.stack.check()?;
        let key = Some(n as *const Node as usize);
        let mut built = match n {
            Node::Result => {
                let mut node = PlanNode::new("Result", "Result");
                node.cost = cost::result();
                Built { node, cols: Vec::new(), widths: Vec::new() }
            }
            Node::Scan(s) => {
                let mut b = self.scan(s, None)?;
                b.node.key = key;
                b
            }
            Node::Computed { view, filter } => {
                let name = self.scan_name(view.name());
                let cols: Vec<Col> = view
                    .columns()
                    .iter()
                    .map(|c| Col::Var { rel: name.clone(), name: c.name.into() })
                    .collect();
                let widths: Vec<u32> = view.columns().iter().map(|c| cost::type_width(c.ty)).collect();
                let mut node =
                    PlanNode::new("Seq Scan", format!("Seq Scan on {}", self.target(view.name(), &name)));
                node.target_props = self.target_props(view.name(), &name);
                node.cost = cost::computed(100.0, widths.iter().sum());
                let mut built = Built { node, cols, widths };
                if let Some(f) = filter {
                    self.filter(&mut built, f, self.verbose);
                }
                built
            }
            Node::SetOp { op, all, left, right } => {
                let l = self.node(left)?;
                let r = self.node(right)?;
                let mut append = PlanNode::new("Append", "Append");
                append.cost = cost::append(&[&l.node.cost, &r.node.cost]);
                let (cols, widths) = (l.cols.clone(), l.widths.clone());
                append.children.push(l.node.child("Member"));
                append.children.push(r.node.child("Member"));
                if *op == SetOpKind::Union && *all {
                    Built { node: append, cols, widths }
                } else {
                    let mut node = if *op == SetOpKind::Union {
                        let mut n = PlanNode::new("Aggregate", "HashAggregate");
                        n.kind_props.push(("Strategy", Prop::Text("Hashed".into())));
                        let keys = self.with_deparser(&cols, self.prefix, |d| {
                            (0..cols.len()).map(|i| d.expr(&Expr::Column(i))).collect::<Vec<_>>()
                        });
                        n.details.push(("Group Key", Prop::List(keys)));
                        n
                    } else {
                        let word = if *op == SetOpKind::Intersect { "Intersect" } else { "Except" };
                        let all = if *all { " All" } else { "" };
                        let mut n = PlanNode::new("SetOp", format!("HashSetOp {word}{all}"));
                        n.kind_props.push(("Strategy", Prop::Text("Hashed".into())));
                        n.kind_props.push(("Command", Prop::Text(format!("{word}{all}"))));
                        n
                    };
                    node.cost = cost::hash_aggregate(&append.cost, cols.len(), None);
                    node.children.push(append.child("Outer"));
                    Built { node, cols, widths }
                }
            }
            Node::Values(rows) => self.values(rows, key)?,
            Node::RecursiveUnion { id, base, step, .. } => {
                let b = self.node(base)?;
                self.work_tables.insert(*id, (b.cols.clone(), b.widths.clone()));
                let s = self.node(step)?;
                let mut node = PlanNode::new("Recursive Union", "Recursive Union");
                node.cost = cost::append(&[&b.node.cost, &s.node.cost]);
                let (cols, widths) = (b.cols.clone(), b.widths.clone());
                node.children.push(b.node.child("Outer"));
                node.children.push(s.node.child("Inner"));
                Built { node, cols, widths }
            }
            Node::WorkTable(id) => {
                let (cols, widths) = self.work_tables.get(id).cloned().unwrap_or_default();
                let mut node = PlanNode::new("WorkTable Scan", "WorkTable Scan on worktable");
                node.cost = cost::function_scan(widths.iter().sum());
                Built { node, cols, widths }
            }
            Node::Function { func, args, ordinality } => self.function(*func, args, *ordinality)?,
            Node::Numbered(input) => {
                let mut b = self.node(input)?;
                b.cols.push(Col::Var { rel: String::new(), name: "ordinality".into() });
                b.widths.push(8);
                b
            }
            Node::Zip { items, ordinality } => {
                let name = items
                    .first()
                    .and_then(|(n, _, _)| match n {
                        Node::Function { func, .. } => Some(srf_name(*func)),
                        _ => None,
                    })
                    .unwrap_or("rows_from");
                let alias = self.scan_name(name);
                let width: usize = items.iter().map(|(_, w, _)| *w).sum::<usize>() + usize::from(*ordinality);
                let cols = (0..width).map(|_| Col::Var { rel: alias.clone(), name: alias.clone() }).collect();
                let mut node =
                    PlanNode::new("Function Scan", format!("Function Scan on {}", self.target(name, &alias)));
                node.cost = cost::function_scan(4 * width as u32);
                Built { node, cols, widths: vec![4; width] }
            }
            Node::Filter { input, cond } => {
                let mut b = self.node(input)?;
                let scan = b.node.node_type.ends_with("Scan");
                self.filter(&mut b, cond, if scan { self.verbose } else { self.prefix });
                b
            }
            Node::NestLoop { join } => self.nest_loop(join, false)?,
            Node::Lateral { join, .. } => self.nest_loop(join, true)?,
            Node::IndexJoin { left, right, index, probes, kind, cond } => {
                let l = self.node(left)?;
                let r = self.scan(right, Some((index, probes, &l.cols)))?;
                let mut node = PlanNode::new("Nested Loop", join_heading("Nested Loop", *kind));
                node.target_props.push(("Join Type", Prop::Text(join_type(*kind).into())));
                node.cost = cost::index_join(&l.node.cost, &r.node.cost);
                let (cols, widths) = joined_cols(&l, &r);
                if let Some(c) = cond {
                    // The index's equality is checked again over the
                    // joined row; PostgreSQL shows it once, as the
                    // index condition.
                    let parts = self.with_deparser(&cols, true, |d| d.conjuncts(c));
                    let seen = std::mem::take(&mut self.index_join_conds);
                    let keep: Vec<bool> = parts.iter().map(|p| !seen.contains(p)).collect();
                    let parts = self.with_deparser(&cols, self.prefix, |d| d.conjuncts(c));
                    let rest: Vec<String> =
                        parts.into_iter().zip(keep).filter(|(_, k)| *k).map(|(p, _)| p).collect();
                    if !rest.is_empty() {
                        node.text("Join Filter", and_of(&rest));
                    }
                }
                let (cols, widths) = output_cols(*kind, &l, cols, widths);
                node.children.push(l.node.child("Outer"));
                node.children.push(r.node.child("Inner"));
                Built { node, cols, widths }
            }
            Node::HashJoin { join, left_keys, right_keys } => {
                let l = self.node(&join.left)?;
                let r = self.node(&join.right)?;
                let mut node = PlanNode::new("Hash Join", join_heading("Hash", join.kind));
                node.target_props.push(("Join Type", Prop::Text(join_type(join.kind).into())));
                let lk = self.with_deparser(&l.cols, self.prefix, |d| {
                    left_keys.iter().map(|k| d.expr(k)).collect::<Vec<_>>()
                });
                let rk = self.with_deparser(&r.cols, self.prefix, |d| {
                    right_keys.iter().map(|k| d.expr(k)).collect::<Vec<_>>()
                });
                let conds: Vec<String> = lk.iter().zip(&rk).map(|(a, b)| format!("({a} = {b})")).collect();
                node.text("Hash Cond", and_of(&conds));
                let (cols, widths) = joined_cols(&l, &r);
                if let Some(c) = &join.cond {
                    let parts = self.with_deparser(&cols, self.prefix, |d| d.conjuncts(c));
                    node.text("Join Filter", and_of(&parts));
                }
                let mut hash = PlanNode::new("Hash", "Hash");
                hash.cost = cost::hash(&r.node.cost);
                let traced = |cols: &[Col], k: &Expr| match k {
                    Expr::Column(i) => cols.get(*i).cloned(),
                    _ => None,
                };
                let pairs: Vec<(Option<Col>, Option<Col>)> = left_keys
                    .iter()
                    .zip(right_keys)
                    .map(|(a, b)| (traced(&l.cols, a), traced(&r.cols, b)))
                    .collect();
                let pairs: Vec<(Option<&Col>, Option<&Col>)> =
                    pairs.iter().map(|(a, b)| (a.as_ref(), b.as_ref())).collect();
                let sel = estimates::join_selectivity(&self.tables, &pairs);
                let bucket = estimates::bucket_fraction(
                    &self.tables,
                    pairs.first().and_then(|p| p.1),
                    r.node.cost.rows,
                );
                node.cost = cost::hash_join(&l.node.cost, &hash.cost, left_keys.len(), sel, bucket);
                hash.children.push(r.node.child("Outer"));
                let (cols, widths) = output_cols(join.kind, &l, cols, widths);
                node.children.push(l.node.child("Outer"));
                node.children.push(hash.child("Inner"));
                Built { node, cols, widths }
            }
            Node::LockRows { input, .. } => {
                let b = self.node(input)?;
                let mut node = PlanNode::new("LockRows", "LockRows");
                node.cost = cost::pass(&b.node.cost, 1.0);
                node.children.push(b.node.child("Outer"));
                Built { node, cols: b.cols, widths: b.widths }
            }
            Node::Aggregate { input, keys, aggs, having } => {
                let b = self.node(input)?;
                let (mut node, mut cols, mut widths) = if keys.is_empty() {
                    let mut n = PlanNode::new("Aggregate", "Aggregate");
                    n.kind_props.push(("Strategy", Prop::Text("Plain".into())));
                    n.cost = cost::plain_aggregate(&b.node.cost, aggs.len());
                    (n, Vec::new(), Vec::new())
                } else {
                    let mut n = PlanNode::new("Aggregate", "HashAggregate");
                    n.kind_props.push(("Strategy", Prop::Text("Hashed".into())));
                    let traced: Vec<Option<&Col>> = keys
                        .iter()
                        .map(|k| match k {
                            Expr::Column(i) => b.cols.get(*i),
                            _ => None,
                        })
                        .collect();
                    let groups = estimates::groups(&self.tables, &traced, b.node.cost.rows);
                    n.cost = cost::hash_aggregate(&b.node.cost, keys.len() + aggs.len(), groups);
                    let texts = self.with_deparser(&b.cols, self.prefix, |d| {
                        keys.iter().map(|k| d.expr(k)).collect::<Vec<_>>()
                    });
                    n.details.push(("Group Key", Prop::List(texts.clone())));
                    let cols = keys
                        .iter()
                        .zip(texts)
                        .map(|(k, t)| match k {
                            Expr::Column(i) => b.cols.get(*i).cloned().unwrap_or(Col::Expr(t)),
                            _ => Col::Expr(t),
                        })
                        .collect();
                    let widths =
                        keys.iter()
                            .map(|k| {
                                if let Expr::Column(i) = k {
                                    b.widths.get(*i).copied().unwrap_or(4)
                                } else {
                                    4
                                }
                            })
                            .collect();
                    (n, cols, widths)
                };
                let texts = self.with_deparser(&b.cols, self.prefix, |d| {
                    aggs.iter().map(|a| d.aggregate(a)).collect::<Vec<_>>()
                });
                let keys_written = self.with_deparser(&b.cols, self.prefix, |d| {
                    keys.iter().map(|k| d.expr(k)).collect::<Vec<_>>()
                });
                node.output = keys_written.into_iter().chain(texts.iter().cloned()).collect();
                cols.extend(texts.into_iter().map(Col::Expr));
                widths.extend(aggs.iter().map(|a| cost::type_width(a.ty)));
                node.cost.width = widths.iter().sum();
                node.children.push(b.node.child("Outer"));
                let mut built = Built { node, cols, widths };
                if let Some(h) = having {
                    self.filter(&mut built, h, self.prefix);
                }
                built
            }
            Node::ProjectSet { input, calls } => {
                let b = self.node(input)?;
                let mut node = PlanNode::new("ProjectSet", "ProjectSet");
                node.cost = cost::project_set(&b.node.cost);
                let texts = self.with_deparser(&b.cols, self.prefix, |d| {
                    calls
                        .iter()
                        .map(|c| {
                            format!(
                                "{}({})",
                                srf_name(c.func),
                                c.args.iter().map(|a| d.expr(a)).collect::<Vec<_>>().join(", ")
                            )
                        })
                        .collect::<Vec<_>>()
                });
                let mut cols = b.cols.clone();
                let mut widths = b.widths.clone();
                node.output = self.written(&b.cols).into_iter().chain(texts.iter().cloned()).collect();
                for (t, c) in texts.into_iter().zip(calls) {
                    cols.push(Col::Expr(t));
                    widths.push(cost::type_width(c.ty));
                }
                node.children.push(b.node.child("Outer"));
                Built { node, cols, widths }
            }
            Node::Window { input, calls } => {
                let b = self.node(input)?;
                let mut node = PlanNode::new("WindowAgg", "WindowAgg");
                node.cost = cost::pass(&b.node.cost, calls.len() as f64);
                let texts = self.with_deparser(&b.cols, self.prefix, |d| {
                    calls
                        .iter()
                        .map(|c| {
                            let name = format!("{:?}", c.func);
                            let args: Vec<String> = c.arg.iter().chain(&c.more).map(|a| d.expr(a)).collect();
                            format!("{}({}) OVER (?)", snake(&name), args.join(", "))
                        })
                        .collect::<Vec<_>>()
                });
                let mut cols = b.cols.clone();
                let mut widths = b.widths.clone();
                node.output = self.written(&b.cols).into_iter().chain(texts.iter().cloned()).collect();
                for (t, c) in texts.into_iter().zip(calls) {
                    cols.push(Col::Expr(t));
                    widths.push(cost::type_width(c.ty));
                }
                node.children.push(b.node.child("Outer"));
                Built { node, cols, widths }
            }
            Node::Sort { input, keys } => {
                let b = self.node(input)?;
                let mut node = PlanNode::new("Sort", "Sort");
                node.cost = cost::sort(&b.node.cost);
                let texts = self.with_deparser(&b.cols, self.prefix, |d| d.sort_keys(keys));
                node.details.push(("Sort Key", Prop::List(texts)));
                node.children.push(b.node.child("Outer"));
                Built { node, cols: b.cols, widths: b.widths }
            }
            Node::Project { input, exprs } => {
                let mut b = self.node(input)?;
                // The node below computes these itself (PostgreSQL has no
                // projection node): its computed values are no references.
                let own: Vec<Col> = b
                    .cols
                    .iter()
                    .map(|c| match c {
                        Col::Expr(t) => Col::Raw(t.clone()),
                        other => other.clone(),
                    })
                    .collect();
                let texts = self.with_deparser(&own, self.tlist_prefix, |d| {
                    exprs.iter().map(|e| d.expr(e)).collect::<Vec<_>>()
                });
                let cols: Vec<Col> = exprs
                    .iter()
                    .zip(&texts)
                    .map(|(e, t)| match e {
                        Expr::Column(i) => b.cols.get(*i).cloned().unwrap_or(Col::Expr(t.clone())),
                        _ => Col::Expr(t.clone()),
                    })
                    .collect();
                let widths: Vec<u32> = exprs
                    .iter()
                    .map(|e| match e {
                        Expr::Column(i) => b.widths.get(*i).copied().unwrap_or(4),
                        _ => 4,
                    })
                    .collect();
                b.node.output = texts;
                b.node.cost.width = widths.iter().sum();
                self.attach_subplans(&mut b.node)?;
                // The node's own counts stand for the projection's rows.
                return Ok(Built { node: b.node, cols, widths });
            }
            Node::Limit { input, limit, offset } => {
                let b = self.node(input)?;
                let mut node = PlanNode::new("Limit", "Limit");
                let count = |e: &Option<Expr>| match e {
                    Some(Expr::Const(snapscale_values::Value::Int(n))) => Some(*n as f64),
                    _ => None,
                };
                node.cost = cost::limit(&b.node.cost, count(offset), count(limit));
                node.children.push(b.node.child("Outer"));
                Built { node, cols: b.cols, widths: b.widths }
            }
            Node::Unique { input, .. } => {
                let b = self.node(input)?;
                let mut node = PlanNode::new("Unique", "Unique");
                let traced: Vec<Option<&Col>> = b.cols.iter().map(Some).collect();
                let groups = estimates::groups(&self.tables, &traced, b.node.cost.rows);
                node.cost = cost::unique(&b.node.cost, groups);
                node.children.push(b.node.child("Outer"));
                Built { node, cols: b.cols, widths: b.widths }
            }
        };
        if built.node.key.is_none() {
            built.node.key = key;
        }
        if built.node.cost.width == 0 {
            built.node.cost.width = built.widths.iter().sum();
        }
        if self.verbose && built.node.output.is_empty() {
            built.node.output = self.written(&built.cols);
        }
        self.attach_subplans(&mut built.node)?;
        Ok(built)
    }

    /// A scan of a table; `via`: the index, probes and left row of the
    /// index join it is the inner side of.
    fn scan(&mut self, s: &ScanNode, via: Option<Via<'_>>) -> Result<Built, SqlError> {
        let entry = &s.rel.entry;
        let alias = self.scan_name(&entry.name);
        let mut cols: Vec<Col> =
            entry.columns.iter().map(|c| Col::Var { rel: alias.clone(), name: c.name.clone() }).collect();
        cols.push(Col::Var { rel: alias.clone(), name: "ctid".into() });
        let mut widths: Vec<u32> = entry.columns.iter().map(|c| cost::type_width(c.ty)).collect();
        widths.push(6);
        let rows = cost::table_rows(&s.rel);
        let info = TableInfo::new(&s.rel, rows.0);
        // Widths from the statistics where the columns have them.
        for (i, w) in widths.iter_mut().enumerate().take(entry.columns.len()) {
            if let Some(c) = info.column(i) {
                *w = c.avg_width.max(0) as u32;
            }
        }
        let width: u32 = widths.iter().take(entry.columns.len()).sum();
        let index_name = |index: &std::sync::Arc<snapscale_engine::index::Index>| {
            entry
                .indexes
                .iter()
                .find(|d| std::sync::Arc::ptr_eq(s.rel.heap.index(entry, d), index))
                .map_or_else(|| "?".to_owned(), |d| d.name.clone())
        };
        let key_name = |index: &snapscale_engine::index::Index, k: usize| {
            index
                .columns
                .get(k)
                .and_then(|&c| entry.columns.get(c))
                .map_or_else(|| "?expr".to_owned(), |c| ident(&c.name))
        };
        let key_col = |index: &snapscale_engine::index::Index, k: usize| {
            let name = key_name(index, k);
            if self.verbose {
                format!("{}.{}", ident(&alias), name)
            } else {
                name
            }
        };
        let (mut node, index_conds) = match (via, &s.access) {
            (Some((index, probes, left)), _) => {
                let probes = self.with_deparser(left, self.prefix, |d| {
                    probes.iter().map(|p| d.expr(p)).collect::<Vec<_>>()
                });
                let conds: Vec<String> = probes
                    .iter()
                    .enumerate()
                    .map(|(k, p)| format!("({} = {p})", key_col(index, k)))
                    .collect();
                let full: Vec<String> = probes
                    .iter()
                    .enumerate()
                    .flat_map(|(k, p)| {
                        let col = format!("{}.{}", ident(&alias), key_name(index, k));
                        [format!("({col} = {p})"), format!("({p} = {col})")]
                    })
                    .collect();
                self.index_join_conds = full;
                let mut n = self.index_scan_node(&index_name(index), &entry.name, &alias);
                n.cost = cost::index_scan(rows, width, index.unique && probes.len() == index.columns.len());
                (n, conds)
            }
            (None, Access::Seq) => {
                let mut n =
                    PlanNode::new("Seq Scan", format!("Seq Scan on {}", self.target(&entry.name, &alias)));
                n.target_props = self.target_props(&entry.name, &alias);
                let ops = s.filter.as_ref().map_or(0.0, cost::qual_ops);
                n.cost = cost::seq_scan(rows, width, ops);
                (n, Vec::new())
            }
            (None, Access::IndexEq { index, probes }) => {
                let probes = self.with_deparser(&[], self.prefix, |d| {
                    probes.iter().map(|p| d.expr(p)).collect::<Vec<_>>()
                });
                let conds: Vec<String> = probes
                    .iter()
                    .enumerate()
                    .map(|(k, p)| format!("({} = {p})", key_col(index, k)))
                    .collect();
                let mut n = self.index_scan_node(&index_name(index), &entry.name, &alias);
                n.cost = cost::index_scan(rows, width, index.unique && probes.len() == index.columns.len());
                (n, conds)
            }
            (None, Access::IndexRange { index, lower, upper }) => {
                let col = key_col(index, 0);
                let mut conds = Vec::new();
                self.with_deparser(&[], self.prefix, |d| {
                    match lower {
                        Bound::Included(e) => conds.push(format!("({col} >= {})", d.expr(e))),
                        Bound::Excluded(e) => conds.push(format!("({col} > {})", d.expr(e))),
                        Bound::Unbounded => {}
                    }
                    match upper {
                        Bound::Included(e) => conds.push(format!("({col} <= {})", d.expr(e))),
                        Bound::Excluded(e) => conds.push(format!("({col} < {})", d.expr(e))),
                        Bound::Unbounded => {}
                    }
                });
                let mut n = self.index_scan_node(&index_name(index), &entry.name, &alias);
                n.cost = cost::index_range(rows, width);
                (n, conds)
            }
            (None, Access::IndexAny { index, arms }) => {
                // One index scan looking up each value and range in turn:
                // its condition as PostgreSQL writes the same search (equal
                // values as `= ANY (ARRAY[…])`, ranges joined by OR).
                let col = key_col(index, 0);
                let mut eqs = Vec::new();
                let mut parts = Vec::new();
                self.with_deparser(&[], self.prefix, |d| {
                    for arm in arms {
                        match arm {
                            IndexArm::Eq(e) => eqs.push(d.expr(e)),
                            IndexArm::EachOf(e) => parts.push(format!("({col} = ANY ({}))", d.expr(e))),
                            IndexArm::Range { lower, upper } => {
                                let mut bounds = Vec::new();
                                match lower {
                                    Bound::Included(e) => bounds.push(format!("({col} >= {})", d.expr(e))),
                                    Bound::Excluded(e) => bounds.push(format!("({col} > {})", d.expr(e))),
                                    Bound::Unbounded => {}
                                }
                                match upper {
                                    Bound::Included(e) => bounds.push(format!("({col} <= {})", d.expr(e))),
                                    Bound::Excluded(e) => bounds.push(format!("({col} < {})", d.expr(e))),
                                    Bound::Unbounded => {}
                                }
                                parts.push(and_of(&bounds));
                            }
                        }
                    }
                });
                match eqs.as_slice() {
                    [] => {}
                    [one] => parts.insert(0, format!("({col} = {one})")),
                    many => parts.insert(0, format!("({col} = ANY (ARRAY[{}]))", many.join(", "))),
                }
                let cond = match parts.as_slice() {
                    [one] => one.clone(),
                    many => format!("({})", many.join(" OR ")),
                };
                let mut n = self.index_scan_node(&index_name(index), &entry.name, &alias);
                n.cost = cost::index_range(rows, width);
                (n, vec![cond])
            }
            (None, Access::CurrentOf(cursor)) => {
                let mut n =
                    PlanNode::new("Tid Scan", format!("Tid Scan on {}", self.target(&entry.name, &alias)));
                n.target_props = self.target_props(&entry.name, &alias);
                n.cost = cost::index_scan(rows, width, true);
                (n, vec![format!("CURRENT OF {}", ident(cursor))])
            }
        };
        if !index_conds.is_empty() {
            let label = if node.node_type == "Tid Scan" { "TID Cond" } else { "Index Cond" };
            node.text(label, and_of(&index_conds));
        }
        let mut built = Built { node, cols, widths };
        if let Some(f) = &s.filter {
            // The index's own condition is re-checked on every row; it is
            // shown once, as PostgreSQL's index scan shows it.
            let written = self.with_deparser(&built.cols, self.verbose, |d| d.conjuncts(f));
            let rest: Vec<String> = written.into_iter().filter(|c| !index_conds.contains(c)).collect();
            if !rest.is_empty() {
                built.node.text("Filter", and_of(&rest));
            }
            // The rows the whole condition keeps, index conditions
            // included (they are in the filter too).
            built.node.cost.rows = cost::selected(rows.0, selectivity::selectivity(f, &info));
        }
        self.tables.insert(alias.clone(), Scanned { info, rows: built.node.cost.rows });
        built.node.key = Some(s as *const ScanNode as usize);
        Ok(built)
    }

    fn index_scan_node(&self, index: &str, relname: &str, alias: &str) -> PlanNode {
        let mut n = PlanNode::new(
            "Index Scan",
            format!("Index Scan using {} on {}", ident(index), self.target(relname, alias)),
        );
        n.target_props.push(("Scan Direction", Prop::Text("Forward".into())));
        n.target_props.push(("Index Name", Prop::Text(index.to_owned())));
        n.target_props.extend(self.target_props(relname, alias));
        n
    }

    /// `cond` as the node's Filter (added to one it has), or under a
    /// Result that filters where PostgreSQL's node takes none.
    fn filter(&self, b: &mut Built, cond: &Expr, prefix: bool) {
        // The node evaluates its qualification over the values it
        // computes itself: no references to them (a HAVING over an
        // aggregate's values).
        let own: Vec<Col> = b
            .cols
            .iter()
            .map(|c| match c {
                Col::Expr(t) => Col::Raw(t.clone()),
                other => other.clone(),
            })
            .collect();
        let parts = self.with_deparser(&own, prefix, |d| d.conjuncts(cond));
        if !b.node.takes_filter() {
            let inner = std::mem::replace(&mut b.node, PlanNode::new("Result", "Result"));
            b.node.cost = cost::pass(&inner.cost, 1.0);
            b.node.children.push(inner.child("Outer"));
        }
        let mut all = match b.node.details.iter().position(|(l, _)| *l == "Filter") {
            Some(i) => match b.node.details.remove(i).1 {
                Prop::Text(t) => vec![t],
                Prop::List(l) => l,
            },
            None => Vec::new(),
        };
        b.node.cost.rows = cost::filtered(b.node.cost.rows, parts.len());
        all.extend(parts);
        b.node.text("Filter", and_of(&all));
    }

    fn values(&mut self, rows: &[Vec<Expr>], key: Option<usize>) -> Result<Built, SqlError> {
        let width = rows.first().map_or(0, Vec::len);
        let name = self.scan_name("*VALUES*");
        let cols = (1..=width).map(|i| Col::Var { rel: name.clone(), name: format!("column{i}") }).collect();
        let mut node = PlanNode::new("Values Scan", format!("Values Scan on {}", ident(&name)));
        node.target_props.push(("Alias", Prop::Text(name)));
        node.cost = cost::values(rows.len(), width);
        node.key = key;
        // Written only for the subplans they name, which are shown.
        for row in rows {
            self.with_deparser(&[], self.prefix, |d| {
                for e in row {
                    let _ = d.expr(e);
                }
            });
        }
        Ok(Built { node, cols, widths: vec![4; width] })
    }

    fn function(&mut self, func: Srf, args: &[Expr], ordinality: bool) -> Result<Built, SqlError> {
        let name = srf_name(func);
        let alias = self.scan_name(name);
        let width = match func {
            Srf::JsonEach { .. } | Srf::ExpandArray => 2,
            Srf::RecordOf { width } => width,
            _ => 1,
        };
        let mut cols: Vec<Col> =
            (0..width).map(|_| Col::Var { rel: alias.clone(), name: alias.clone() }).collect();
        let mut widths = vec![4; width];
        if ordinality {
            cols.push(Col::Var { rel: alias.clone(), name: "ordinality".into() });
            widths.push(8);
        }
        let mut node =
            PlanNode::new("Function Scan", format!("Function Scan on {}", self.target(name, &alias)));
        node.target_props.push(("Function Name", Prop::Text(name.into())));
        node.target_props.push(("Alias", Prop::Text(alias.clone())));
        node.cost = cost::function_scan(widths.iter().sum());
        let call = self.with_deparser(&[], self.prefix, |d| {
            format!("{name}({})", args.iter().map(|a| d.expr(a)).collect::<Vec<_>>().join(", "))
        });
        if self.verbose {
            node.text("Function Call", call);
        }
        Ok(Built { node, cols, widths })
    }

    fn nest_loop(&mut self, join: &JoinNode, lateral: bool) -> Result<Built, SqlError> {
        let l = self.node(&join.left)?;
        let r = self.node(&join.right)?;
        let mut node = PlanNode::new("Nested Loop", join_heading("Nested Loop", join.kind));
        node.target_props.push(("Join Type", Prop::Text(join_type(join.kind).into())));
        let (cols, widths) = joined_cols(&l, &r);
        if let Some(c) = &join.cond {
            let parts = self.with_deparser(&cols, self.prefix, |d| d.conjuncts(c));
            node.text("Join Filter", and_of(&parts));
        }
        let (cols, widths) = output_cols(join.kind, &l, cols, widths);
        let inner = if !lateral && r.node.node_type == "Seq Scan" {
            let mut m = PlanNode::new("Materialize", "Materialize");
            m.cost = cost::materialize(&r.node.cost);
            m.children.push(r.node.child("Outer"));
            m
        } else {
            r.node
        };
        node.cost = cost::nest_loop(&l.node.cost, &inner.cost, join.cond.is_some(), lateral);
        node.children.push(l.node.child("Outer"));
        node.children.push(inner.child("Inner"));
        Ok(Built { node, cols, widths })
    }
}

/// How an expression names subplan `plan`.
fn subplan_ref(plan: usize, kind: &SubKind, uncorrelated: bool) -> String {
    match kind {
        SubKind::Any { .. } | SubKind::All { .. } if uncorrelated => format!("hashed SubPlan {}", plan + 1),
        _ => format!("SubPlan {}", plan + 1),
    }
}

fn is_ctid(c: &Col) -> bool {
    matches!(c, Col::Var { name, .. } if name == "ctid")
}

/// The columns of a join's two rows side by side, as its conditions read
/// them.
fn joined_cols(l: &Built, r: &Built) -> (Vec<Col>, Vec<u32>) {
    (l.cols.iter().chain(&r.cols).cloned().collect(), l.widths.iter().chain(&r.widths).copied().collect())
}

/// The columns a join gives: a semi or anti join's are its left row's.
fn output_cols(kind: JoinKind, l: &Built, cols: Vec<Col>, widths: Vec<u32>) -> (Vec<Col>, Vec<u32>) {
    if kind.left_only() {
        (l.cols.clone(), l.widths.clone())
    } else {
        (cols, widths)
    }
}

fn join_type(kind: JoinKind) -> &'static str {
    match kind {
        JoinKind::Inner => "Inner",
        JoinKind::Left => "Left",
        JoinKind::Right => "Right",
        JoinKind::Full => "Full",
        JoinKind::Semi => "Semi",
        JoinKind::Anti => "Anti",
    }
}

/// "Hash Join", "Hash Left Join", "Nested Loop", "Nested Loop Left Join",
/// "Hash Semi Join", "Nested Loop Anti Join".
fn join_heading(base: &str, kind: JoinKind) -> String {
    match (kind, base) {
        (JoinKind::Inner, "Nested Loop") => base.to_owned(),
        (JoinKind::Inner, _) => format!("{base} Join"),
        (other, _) => format!("{base} {} Join", join_type(other)),
    }
}

/// A set-returning function's name.
pub(crate) fn srf_name(f: Srf) -> &'static str {
    match f {
        Srf::GenerateSeries | Srf::NumericSeries | Srf::TimestampSeries { .. } => "generate_series",
        Srf::Unnest => "unnest",
        Srf::ExpandArray => "_pg_expandarray",
        Srf::JsonEach { jsonb: false, text: false } => "json_each",
        Srf::JsonEach { jsonb: false, text: true } => "json_each_text",
        Srf::JsonEach { jsonb: true, text: false } => "jsonb_each",
        Srf::JsonEach { jsonb: true, text: true } => "jsonb_each_text",
        Srf::JsonElements { jsonb: false, text: false } => "json_array_elements",
        Srf::JsonElements { jsonb: false, text: true } => "json_array_elements_text",
        Srf::JsonElements { jsonb: true, text: false } => "jsonb_array_elements",
        Srf::JsonElements { jsonb: true, text: true } => "jsonb_array_elements_text",
        Srf::JsonKeys { jsonb: false } => "json_object_keys",
        Srf::JsonKeys { jsonb: true } => "jsonb_object_keys",
        Srf::JsonPathQuery => "jsonb_path_query",
        Srf::Records => "json_populate_recordset",
        Srf::RecordOf { .. } => "record",
        Srf::Elements(s) => s.name,
    }
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Counts the relations (and joins) a plan reads, as PostgreSQL's range
/// table would hold them.
fn count_relations(n: &Node, count: &mut usize) {
    match n {
        Node::Scan(_)
        | Node::Computed { .. }
        | Node::Values(_)
        | Node::Function { .. }
        | Node::Zip { .. }
        | Node::WorkTable(_) => *count += 1,
        Node::NestLoop { .. } | Node::HashJoin { .. } | Node::Lateral { .. } => *count += 1,
        Node::IndexJoin { .. } => *count += 2,
        _ => {}
    }
    for i in n.inputs() {
        count_relations(i, count);
    }
}

fn count_relations_in(s: &Statement, count: &mut usize) {
    match s {
        Statement::Query(q) => count_relations(&q.root, count),
        Statement::Insert { source, .. } => {
            *count += 1;
            if let Source::Query(q) = source {
                count_relations(&q.root, count);
            }
        }
        Statement::Update { .. } | Statement::Delete { .. } => *count += 1,
        Statement::ModifyJoin(m) => count_relations(&m.query.root, count),
        Statement::InsteadOf(m) => count_relations(&m.query.root, count),
        Statement::Merge(m) => count_relations(&m.join.root, count),
        Statement::CreateTableAs(c) => count_relations(&c.query.root, count),
        Statement::With(w) => {
            count_relations_in(&w.main, count);
            for (_, item) in &w.items {
                count_relations_in(item, count);
            }
        }
        Statement::Utility(_) | Statement::CopyQuery { .. } => {}
    }
}
