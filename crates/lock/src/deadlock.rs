//! Deadlock detection over the wait-for graph (PostgreSQL's deadlock.c,
//! without its soft-deadlock queue rearrangement).
//!
//! A waiter W waiting for mode M on a lock has an edge to
//!
//! * every other session holding a mode that conflicts with M (a hard edge),
//! * every other session queued ahead of W whose requested mode conflicts
//!   with M (a soft edge: W is granted only after it, by the queue rule).
//!
//! Fast-path entries are not in the graph and need not be: a fast-path entry
//! is weak, so only a strong request can wait for it, and a strong requester
//! transfers every matching entry into the table before it queues
//! (FASTPATH-TRANSFER). Vxid locks are in the graph once a waiter has
//! materialised them, which it does before queueing (LAZY-VXID).
//!
//! The check runs in the waiter's own task after `deadlock_timeout`, once
//! per wait. It locks all partitions in index order (DEADLOCK-CHECK), so the
//! graph is a consistent snapshot: no grant, release or enqueue happens
//! while it is built. A cycle is always completed by the last of its members
//! to start waiting, whose own check then runs after the cycle exists; so
//! checking once per wait finds every deadlock, and the session that closed
//! the cycle is the victim, as in PostgreSQL. If W finds a cycle through
//! itself it removes its own request before releasing the partitions, so two
//! members of one cycle never both abort. Any cycle is treated as a deadlock,
//! including those made only partly of soft edges that PostgreSQL would
//! first try to resolve by reordering a queue; the victim's retry resolves
//! them at the cost of one aborted transaction.

use std::collections::{HashMap, HashSet};

use crate::manager::LockManager;
use crate::mode::LockMode;
use crate::sync::MutexGuard;
use crate::table::{mask_of, Partition};
use crate::tag::LockTag;

/// One waiting session and whom it waits for.
struct Wait {
    tag: LockTag,
    mode: LockMode,
    blockers: Vec<u32>,
}

/// The wait-for graph: each waiting session's single wait.
fn build_graph(parts: &[MutexGuard<'_, Partition>]) -> HashMap<u32, Wait> {
    let mut graph = HashMap::new();
    for part in parts {
        for (&tag, entry) in &part.entries {
            for (i, w) in entry.waiters.iter().enumerate() {
                let conflicts = w.mode.conflict_mask();
                let mut blockers: Vec<u32> = entry
                    .holders
                    .iter()
                    .filter(|(&h, counts)| h != w.session && mask_of(counts) & conflicts != 0)
                    .map(|(&h, _)| h)
                    .collect();
                blockers.extend(
                    entry
                        .waiters
                        .iter()
                        .take(i)
                        .filter(|a| a.session != w.session && a.mode.bit() & conflicts != 0)
                        .map(|a| a.session),
                );
                blockers.sort_unstable();
                blockers.dedup();
                let old = graph.insert(w.session, Wait { tag, mode: w.mode, blockers });
                assert!(old.is_none(), "DEADLOCK-CHECK: session {} waits on two locks", w.session);
            }
        }
    }
    graph
}

/// A path of edges from `me` back to `me`, if any; each step is (waiter, blocker).
fn find_cycle(graph: &HashMap<u32, Wait>, me: u32) -> Option<Vec<(u32, u32)>> {
    fn visit(
        graph: &HashMap<u32, Wait>,
        node: u32,
        me: u32,
        seen: &mut HashSet<u32>,
        path: &mut Vec<(u32, u32)>,
    ) -> bool {
        let Some(wait) = graph.get(&node) else { return false };
        for &next in &wait.blockers {
            path.push((node, next));
            if next == me || (seen.insert(next) && visit(graph, next, me, seen, path)) {
                return true;
            }
            path.pop();
        }
        false
    }
    let mut path = Vec::new();
    visit(graph, me, me, &mut HashSet::from([me]), &mut path).then_some(path)
}

/// PostgreSQL's DeadLockReport detail: one line per edge of the cycle.
fn describe(graph: &HashMap<u32, Wait>, cycle: &[(u32, u32)]) -> String {
    let lines: Vec<String> = cycle
        .iter()
        .map(|&(waiter, blocker)| {
            let w = &graph[&waiter];
            format!("Process {waiter} waits for {} on {}; blocked by process {blocker}.", w.mode, w.tag)
        })
        .collect();
    lines.join("\n")
}

impl LockManager {
    /// Looks for a wait-for cycle through `session`; if there is one, removes
    /// `session`'s request (it is the victim) and returns the error detail.
    /// None also when the session is no longer waiting (granted meanwhile).
    pub(crate) fn check_deadlock(&self, session: u32) -> Option<String> {
        // DEADLOCK-CHECK, lock-ordering rule 2: all partitions, index order,
        // and no fp mutex is held or taken while they are.
        let mut parts: Vec<_> = self.table.all().iter().map(|p| p.lock()).collect();
        let graph = build_graph(&parts);
        let cycle = find_cycle(&graph, session)?;
        let detail = describe(&graph, &cycle);
        let tag = graph[&session].tag;
        let part = &mut parts[tag.partition()];
        let removed = part.entries.get_mut(&tag).is_some_and(|e| e.remove_waiter(session));
        assert!(removed, "DEADLOCK-CHECK: victim {session} not queued on {tag}");
        part.settle(tag);
        Some(detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait(blockers: &[u32]) -> Wait {
        Wait { tag: LockTag::Relation(1), mode: LockMode::AccessExclusive, blockers: blockers.to_vec() }
    }

    #[test]
    fn finds_only_cycles_through_the_checker() {
        let graph = HashMap::from([(1, wait(&[2])), (2, wait(&[3])), (3, wait(&[2]))]);
        assert_eq!(find_cycle(&graph, 1), None, "1 waits on a cycle it is not part of");
        assert_eq!(find_cycle(&graph, 2), Some(vec![(2, 3), (3, 2)]));
        let graph = HashMap::from([(1, wait(&[4, 2])), (2, wait(&[1])), (4, wait(&[]))]);
        assert_eq!(find_cycle(&graph, 1), Some(vec![(1, 2), (2, 1)]));
        assert_eq!(
            describe(&graph, &[(1, 2), (2, 1)]),
            "Process 1 waits for AccessExclusiveLock on relation 1; blocked by process 2.\n\
             Process 2 waits for AccessExclusiveLock on relation 1; blocked by process 1."
        );
    }
}
