//! The planner's method switches: PostgreSQL's `enable_*` settings. Each
//! is on or off; off tells the planner not to use that method where it
//! has another (it still uses it where it has none, as PostgreSQL does by
//! costing a disabled method out rather than forbidding it).
//!
//! This planner's choices are few (a table read whole or through an
//! index; a join by hashing, by probing the inner side's index, or by a
//! nested loop), so most switches are accepted and shown and change
//! nothing: enable_indexscan (with enable_bitmapscan, which its index
//! reads also stand for: both off keep a table from being read through an
//! index), enable_hashjoin and enable_nestloop are the ones honoured
//! (`PlannerSettings::index_scans` and friends).

/// Every switch with its default, in PostgreSQL's order.
const SWITCHES: [(&str, bool); 20] = [
    ("enable_async_append", true),
    ("enable_bitmapscan", true),
    ("enable_gathermerge", true),
    ("enable_hashagg", true),
    ("enable_hashjoin", true),
    ("enable_incremental_sort", true),
    ("enable_indexonlyscan", true),
    ("enable_indexscan", true),
    ("enable_material", true),
    ("enable_memoize", true),
    ("enable_mergejoin", true),
    ("enable_nestloop", true),
    ("enable_parallel_append", true),
    ("enable_parallel_hash", true),
    ("enable_partition_pruning", true),
    ("enable_partitionwise_aggregate", false),
    ("enable_partitionwise_join", false),
    ("enable_seqscan", true),
    ("enable_sort", true),
    ("enable_tidscan", true),
];

/// The switches' values, one bit each (set: on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannerSettings {
    on: u32,
}

impl Default for PlannerSettings {
    fn default() -> Self {
        let on = SWITCHES.iter().enumerate().filter(|(_, (_, d))| *d).fold(0, |bits, (i, _)| bits | 1 << i);
        PlannerSettings { on }
    }
}

impl PlannerSettings {
    /// The switches' names.
    pub(crate) fn names() -> impl Iterator<Item = &'static str> {
        SWITCHES.iter().map(|(n, _)| *n)
    }

    fn bit(name: &str) -> Option<u32> {
        SWITCHES.iter().position(|(n, _)| *n == name).map(|i| 1 << i)
    }

    fn is_on(&self, name: &str) -> bool {
        Self::bit(name).is_some_and(|b| self.on & b != 0)
    }

    /// Whether `name` is a switch.
    pub(crate) fn is_switch(name: &str) -> bool {
        Self::bit(name).is_some()
    }

    /// Turns switch `name` on or off (nothing if it is not one).
    pub(crate) fn set(&mut self, name: &str, on: bool) {
        if let Some(bit) = Self::bit(name) {
            if on {
                self.on |= bit
            } else {
                self.on &= !bit
            }
        }
    }

    /// SHOW of a switch; `None` if `name` is not one.
    pub(crate) fn show(&self, name: &str) -> Option<String> {
        Self::bit(name).map(|b| if self.on & b != 0 { "on" } else { "off" }.to_owned())
    }

    /// Whether a table may be read through an index where a whole read
    /// would do.
    pub fn index_scans(&self) -> bool {
        self.is_on("enable_indexscan") || self.is_on("enable_bitmapscan")
    }

    /// Whether a whole read is the planner's choice when an index could
    /// serve (off: an index is used wherever one can be).
    pub fn seq_scans(&self) -> bool {
        self.is_on("enable_seqscan")
    }

    pub fn hash_joins(&self) -> bool {
        self.is_on("enable_hashjoin")
    }

    /// Nested loops, the index-probing join among them.
    pub fn nested_loops(&self) -> bool {
        self.is_on("enable_nestloop")
    }
}

#[cfg(test)]
mod tests {
    // SET's parsing of the values is guc/session.rs's.
    use super::*;

    #[test]
    fn switches_set_show_and_steer() {
        let mut p = PlannerSettings::default();
        assert_eq!(p.show("enable_seqscan").as_deref(), Some("on"));
        assert_eq!(p.show("enable_partitionwise_join").as_deref(), Some("off"));
        p.set("enable_indexscan", false);
        assert!(p.index_scans(), "bitmap scans still allowed");
        p.set("enable_bitmapscan", false);
        assert!(!p.index_scans());
        assert!(PlannerSettings::is_switch("enable_hashjoin") && !PlannerSettings::is_switch("work_mem"));
        assert_eq!(p.show("enable_indexscan").as_deref(), Some("off"));
        assert_eq!(PlannerSettings::names().count(), 20);
    }
}
