//! Deadlock detection over the wait-for graph, with PostgreSQL's
//! resolution of soft deadlocks by reordering wait queues (deadlock.c).
//!
//! A waiter W waiting for mode M on a lock has an edge to
//!
//! * every other session holding a mode that conflicts with M (a hard edge:
//!   only that session's end can release W),
//! * every other session queued ahead of W whose requested mode conflicts
//!   with M (a soft edge: W is granted only after it, by the queue rule,
//!   but moving W ahead of it in the queue removes the edge).
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
//! while it is built or acted on. A cycle is always completed by the last
//! of its members to start waiting, whose own check then runs after the
//! cycle exists; so checking once per wait finds every deadlock, and the
//! session that closed the cycle is the victim, as in PostgreSQL.
//!
//! A cycle through the checker that contains soft edges may be broken
//! without an abort: the search tries, depth first, to reverse soft edges
//! (each reversal is a constraint "this waiter goes before that one" on one
//! queue), orders each constrained queue by a topological sort that keeps
//! the current order where no constraint says otherwise, and accepts the
//! first set of constraints under which no cycle runs through the checker
//! or through any constrained session. The queues are then rewritten in
//! that order and waiters that can now go are granted. Only when no set of
//! reversals works (or the search runs out of room) is the cycle a
//! deadlock: the checker removes its own request before releasing the
//! partitions, so two members of one cycle never both abort.

use std::collections::HashMap;

use crate::error::deadlock_detail;
use crate::manager::LockManager;
use crate::mode::{LockMode, ModeMask};
use crate::sync::MutexGuard;
use crate::table::{mask_of, Partition};
use crate::tag::LockTag;

/// How many sets of constraints one check may try before it gives up and
/// calls the cycle a deadlock. Each try is linear in the graph, and the
/// check holds every partition: the bound keeps a pathological graph from
/// stalling the lock table. PostgreSQL bounds the same search by the room
/// in its constraint arrays.
const MAX_TRIES: usize = 10_000;

/// A lock with waiters, as the check sees it.
struct LockView {
    /// Sessions holding something, with what they hold, by session id (a
    /// fixed order keeps the search, and so its answer, deterministic).
    holders: Vec<(u32, ModeMask)>,
    /// Waiting sessions in queue order.
    queue: Vec<u32>,
}

/// The wait-for graph: what each waiting session waits for, and the
/// locks they wait on.
struct Graph {
    waits: HashMap<u32, (LockTag, LockMode)>,
    locks: HashMap<LockTag, LockView>,
}

fn build_graph(parts: &[MutexGuard<'_, Partition>]) -> Graph {
    let mut graph = Graph { waits: HashMap::new(), locks: HashMap::new() };
    for part in parts {
        for (&tag, entry) in &part.entries {
            if entry.waiters.is_empty() {
                continue;
            }
            let mut holders: Vec<(u32, ModeMask)> =
                entry.holders.iter().map(|(&s, c)| (s, mask_of(c))).collect();
            holders.sort_unstable();
            let queue = entry.waiters.iter().map(|w| w.session).collect();
            for w in &entry.waiters {
                let old = graph.waits.insert(w.session, (tag, w.mode));
                assert!(old.is_none(), "DEADLOCK-CHECK: session {} waits on two locks", w.session);
            }
            graph.locks.insert(tag, LockView { holders, queue });
        }
    }
    graph
}

/// A soft edge: `waiter` waits behind `blocker` in `lock`'s queue. As a
/// constraint, the reverse: `waiter` goes before `blocker`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Edge {
    waiter: u32,
    blocker: u32,
    lock: LockTag,
}

/// What a configuration (the current constraints) leaves.
enum Configuration {
    /// No cycle through the sessions that matter.
    Clear,
    /// A cycle with no soft edge, or constraints that cannot all hold.
    Hard,
    /// A cycle whose soft edges are these.
    Soft(Vec<Edge>),
}

/// One deadlock check: PostgreSQL's DeadLockCheck and its helpers.
struct Search<'g> {
    graph: &'g Graph,
    /// Sessions reached by the current cycle search; the first is its start.
    visited: Vec<u32>,
    /// The last cycle found, one (waiter, lock, mode) per step, from the
    /// start onwards.
    cycle: Vec<(u32, LockTag, LockMode)>,
    /// Reversed soft edges being tried.
    constraints: Vec<Edge>,
    /// The queue orders the constraints give, for the constrained locks.
    orders: Vec<(LockTag, Vec<u32>)>,
    /// Room for pending candidate edges (PostgreSQL's possibleConstraints).
    room: usize,
    tries: usize,
}

impl<'g> Search<'g> {
    fn new(graph: &'g Graph) -> Self {
        let waiting = graph.waits.len();
        Search {
            graph,
            visited: Vec::new(),
            cycle: Vec::new(),
            constraints: Vec::new(),
            orders: Vec::new(),
            room: 4 * waiting + 4,
            tries: 0,
        }
    }

    /// The soft edges of a cycle through `start`, if there is one (empty:
    /// a hard cycle). `cycle` describes it.
    fn find_cycle(&mut self, start: u32) -> Option<Vec<Edge>> {
        self.visited.clear();
        self.cycle.clear();
        let mut soft = Vec::new();
        if self.visit(start, &mut soft) {
            self.cycle.reverse();
            Some(soft)
        } else {
            None
        }
    }

    /// Depth first from `session`. A session is visited once per search:
    /// a cycle that does not return to the start is not this check's.
    fn visit(&mut self, session: u32, soft: &mut Vec<Edge>) -> bool {
        if let Some(i) = self.visited.iter().position(|&s| s == session) {
            return i == 0;
        }
        self.visited.push(session);
        let Some(&(tag, mode)) = self.graph.waits.get(&session) else { return false };
        let lock = &self.graph.locks[&tag];
        let conflicts = mode.conflict_mask();
        // Hard edges first, so that a session blocking both ways is a hard
        // edge.
        for &(holder, held) in &lock.holders {
            if holder != session && held & conflicts != 0 && self.visit(holder, soft) {
                self.cycle.push((session, tag, mode));
                return true;
            }
        }
        let order = match self.orders.iter().find(|(t, _)| *t == tag) {
            Some((_, order)) => order.clone(),
            None => lock.queue.clone(),
        };
        for ahead in order {
            if ahead == session {
                break;
            }
            if self.graph.waits[&ahead].1.bit() & conflicts != 0 && self.visit(ahead, soft) {
                self.cycle.push((session, tag, mode));
                soft.push(Edge { waiter: session, blocker: ahead, lock: tag });
                return true;
            }
        }
        false
    }

    /// Whether some set of reversals leaves no cycle through `start`
    /// (then `orders` holds the queues to rewrite); false for a deadlock.
    fn resolve(&mut self, start: u32) -> bool {
        self.tries += 1;
        let edges = match self.test(start) {
            Configuration::Clear => return true,
            Configuration::Hard => return false,
            Configuration::Soft(edges) => edges,
        };
        if self.tries >= MAX_TRIES
            || self.constraints.len() >= self.graph.waits.len()
            || edges.len() > self.room
        {
            return false;
        }
        self.room -= edges.len();
        for edge in &edges {
            self.constraints.push(*edge);
            if self.resolve(start) {
                return true;
            }
            self.constraints.pop();
        }
        self.room += edges.len();
        false
    }

    /// Whether the current constraints leave a cycle through `start` or
    /// through any constrained session; the start is looked at last, so
    /// that its own soft cycle is what the next reversal tries to break.
    fn test(&mut self, start: u32) -> Configuration {
        if !self.expand() {
            return Configuration::Hard;
        }
        let mut found = None;
        let involved: Vec<u32> = self.constraints.iter().flat_map(|c| [c.waiter, c.blocker]).collect();
        for session in involved.into_iter().chain([start]) {
            if let Some(soft) = self.find_cycle(session) {
                if soft.is_empty() {
                    return Configuration::Hard;
                }
                found = Some(soft);
            }
        }
        found.map_or(Configuration::Clear, Configuration::Soft)
    }

    /// Computes the queue order of every constrained lock; false if some
    /// lock's constraints contradict each other. The newest constraint is
    /// looked at first: only it can have made the set inconsistent.
    fn expand(&mut self) -> bool {
        self.orders.clear();
        for i in (0..self.constraints.len()).rev() {
            let tag = self.constraints[i].lock;
            if self.orders.iter().any(|(t, _)| *t == tag) {
                continue;
            }
            match topo_sort(&self.graph.locks[&tag].queue, tag, &self.constraints[..=i]) {
                Some(order) => self.orders.push((tag, order)),
                None => return false,
            }
        }
        true
    }
}

/// `queue` reordered so that each constraint's waiter comes before its
/// blocker, otherwise as close to the current order as possible: filled from
/// the back, each place takes the last session that no unplaced session
/// must follow. None if the constraints form a cycle.
fn topo_sort(queue: &[u32], lock: LockTag, constraints: &[Edge]) -> Option<Vec<u32>> {
    let n = queue.len();
    // must_precede[j]: how many unplaced sessions queue[j] must come before.
    let mut must_precede = vec![0usize; n];
    // followers[k]: the positions that must come before queue[k].
    let mut followers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for c in constraints.iter().filter(|c| c.lock == lock) {
        let (Some(j), Some(k)) =
            (queue.iter().position(|&s| s == c.waiter), queue.iter().position(|&s| s == c.blocker))
        else {
            continue;
        };
        must_precede[j] += 1;
        followers[k].push(j);
    }
    let mut placed = vec![false; n];
    let mut order = vec![0; n];
    for slot in (0..n).rev() {
        let j = (0..n).rev().find(|&j| !placed[j] && must_precede[j] == 0)?;
        order[slot] = queue[j];
        placed[j] = true;
        for &p in &followers[j] {
            must_precede[p] -= 1;
        }
    }
    Some(order)
}

impl LockManager {
    /// Looks for a wait-for cycle through `session`. A cycle that reordering
    /// queues can break is broken (and whoever that lets go is granted);
    /// otherwise `session` is the victim: its request is removed and the
    /// error detail returned. None also when the session is no longer
    /// waiting (granted meanwhile).
    pub(crate) fn check_deadlock(&self, session: u32) -> Option<String> {
        // DEADLOCK-CHECK, lock-ordering rule 2: all partitions, index order,
        // and no fp mutex is held or taken while they are.
        let mut parts: Vec<_> = self.table.all().iter().map(|p| p.lock()).collect();
        let graph = build_graph(&parts);
        let &(tag, _) = graph.waits.get(&session)?;
        let mut search = Search::new(&graph);
        if search.resolve(session) {
            for (lock, order) in std::mem::take(&mut search.orders) {
                let part = &mut parts[lock.partition()];
                let entry =
                    part.entries.get_mut(&lock).expect("DEADLOCK-CHECK: a queue in the graph vanished");
                entry.reorder(&order);
                part.settle(lock);
            }
            return None;
        }
        search.orders.clear();
        search.find_cycle(session).expect("DEADLOCK-CHECK: the deadlock vanished under the partition locks");
        let detail = deadlock_detail(&search.cycle);
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
    use LockMode::*;

    /// Sessions with a mode each: holders, or a queue in order.
    type Sessions<'a> = &'a [(u32, LockMode)];

    /// A graph of relation locks: (relation, holders, queue).
    fn graph(locks: &[(u32, Sessions<'_>, Sessions<'_>)]) -> Graph {
        let mut g = Graph { waits: HashMap::new(), locks: HashMap::new() };
        for &(rel, holders, queue) in locks {
            let tag = LockTag::Relation(rel);
            for &(s, m) in queue {
                g.waits.insert(s, (tag, m));
            }
            let holders = holders.iter().map(|&(s, m)| (s, m.bit())).collect();
            g.locks.insert(tag, LockView { holders, queue: queue.iter().map(|q| q.0).collect() });
        }
        g
    }

    #[test]
    fn a_hard_cycle_is_a_deadlock_and_described_from_the_checker() {
        // 1 holds a, waits for b; 2 holds b, waits for a.
        let g = graph(&[
            (10, &[(1, AccessExclusive)], &[(2, AccessExclusive)]),
            (20, &[(2, AccessExclusive)], &[(1, AccessExclusive)]),
        ]);
        let mut s = Search::new(&g);
        assert!(!s.resolve(1));
        assert_eq!(s.find_cycle(1), Some(vec![]));
        assert_eq!(
            deadlock_detail(&s.cycle),
            "Process 1 waits for AccessExclusiveLock on relation 20; blocked by process 2.\n\
             Process 2 waits for AccessExclusiveLock on relation 10; blocked by process 1."
        );
    }

    #[test]
    fn a_cycle_not_through_the_checker_is_not_its_deadlock() {
        let g = graph(&[
            (10, &[(2, AccessExclusive)], &[(3, AccessExclusive), (1, AccessShare)]),
            (20, &[(3, AccessExclusive)], &[(2, AccessExclusive)]),
        ]);
        let mut s = Search::new(&g);
        assert_eq!(s.find_cycle(1), None);
        assert!(s.resolve(1));
        assert!(s.orders.is_empty(), "nothing to reorder");
    }

    #[test]
    fn a_soft_cycle_is_broken_by_moving_a_waiter_ahead() {
        // deadlock-soft: d1 (1) and d2 (2) share a1 (10) and a2 (20); e1 (3)
        // and e2 (4) wait for them exclusively; then each d waits behind
        // the other e for a share.
        let g = graph(&[
            (10, &[(1, AccessShare)], &[(3, AccessExclusive), (2, AccessShare)]),
            (20, &[(2, AccessShare)], &[(4, AccessExclusive), (1, AccessShare)]),
        ]);
        let mut s = Search::new(&g);
        assert!(s.resolve(2));
        assert_eq!(
            s.orders,
            vec![(LockTag::Relation(20), vec![1, 4])],
            "d1 goes ahead of e2, as in PostgreSQL"
        );
    }

    #[test]
    fn topo_sort_keeps_the_order_no_constraint_touches() {
        let tag = LockTag::Relation(1);
        let c = |waiter, blocker| Edge { waiter, blocker, lock: tag };
        assert_eq!(topo_sort(&[1, 2, 3, 4], tag, &[c(4, 2)]), Some(vec![1, 4, 2, 3]));
        assert_eq!(topo_sort(&[1, 2, 3], tag, &[c(3, 1), c(2, 1)]), Some(vec![2, 3, 1]));
        assert_eq!(topo_sort(&[1, 2], tag, &[c(2, 1), c(1, 2)]), None);
        assert_eq!(
            topo_sort(&[1, 2], LockTag::Relation(2), &[c(2, 1)]),
            Some(vec![1, 2]),
            "another lock's constraint"
        );
    }
}
