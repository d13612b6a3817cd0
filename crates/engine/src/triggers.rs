//! Triggers in the catalog (TRIGGER-ROWS): a table's triggers are part of
//! its catalog row (`RelEntry::triggers`), as its indexes and constraints
//! are, so creating, dropping or disabling one rewrites the row: it is
//! logged, replayed and invalidated with the table, and a statement that
//! planned against the table sees the triggers of the row it locked.
//!
//! A trigger names its function by oid (the function is its own catalog
//! row, ROUTINE-ROWS) and keeps its WHEN condition as text, bound again by
//! each statement that fires it, as a view's query is.
//!
//! Replay applies the row changes a primary logged, never the statements
//! that made them: nothing here runs during recovery or on a standby.

/// When a trigger fires relative to its event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerTiming {
    Before,
    After,
    InsteadOf,
}

/// The events a trigger fires on, as pg_trigger.tgtype's bits.
pub mod events {
    pub const INSERT: u8 = 1;
    pub const DELETE: u8 = 2;
    pub const UPDATE: u8 = 4;
    pub const TRUNCATE: u8 = 8;
}

/// One trigger of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct TriggerDef {
    pub oid: u32,
    pub name: String,
    /// The function it calls (a routine's oid).
    pub function: u32,
    pub timing: TriggerTiming,
    /// [`events`] bits.
    pub events: u8,
    /// FOR EACH ROW (else FOR EACH STATEMENT).
    pub row: bool,
    /// UPDATE OF these columns (by name; empty: any UPDATE).
    pub columns: Vec<String>,
    /// WHEN (condition), as text over OLD and NEW.
    pub when: Option<String>,
    /// The arguments the function receives (TG_ARGV), as text.
    pub args: Vec<String>,
    /// pg_trigger.tgenabled: `O` fires (in origin and local sessions),
    /// `D` disabled, `R` fires in replica sessions only, `A` always.
    pub enabled: u8,
    /// A constraint trigger (CREATE CONSTRAINT TRIGGER).
    pub constraint: bool,
    pub deferrable: bool,
    pub initially_deferred: bool,
    /// REFERENCING OLD TABLE AS / NEW TABLE AS: the transition tables'
    /// names.
    pub old_table: Option<String>,
    pub new_table: Option<String>,
}

impl TriggerDef {
    /// pg_trigger.tgtype: ROW 1, BEFORE 2, INSERT 4, DELETE 8, UPDATE 16,
    /// TRUNCATE 32, INSTEAD 64.
    pub fn tgtype(&self) -> i16 {
        let mut t = i16::from(self.row);
        t |= match self.timing {
            TriggerTiming::Before => 2,
            TriggerTiming::After => 0,
            TriggerTiming::InsteadOf => 64,
        };
        for (bit, code) in
            [(events::INSERT, 4), (events::DELETE, 8), (events::UPDATE, 16), (events::TRUNCATE, 32)]
        {
            if self.events & bit != 0 {
                t |= code;
            }
        }
        t
    }

    /// Whether it fires in a session whose session_replication_role is
    /// origin or local.
    pub fn fires(&self) -> bool {
        matches!(self.enabled, b'O' | b'A')
    }

    /// Whether it fires in a session whose session_replication_role is
    /// replica (`replica`), else origin or local: ENABLE REPLICA triggers
    /// fire only in the first, plain enabled ones only in the others,
    /// ENABLE ALWAYS ones in both.
    pub fn fires_as(&self, replica: bool) -> bool {
        match replica {
            true => matches!(self.enabled, b'R' | b'A'),
            false => self.fires(),
        }
    }

    /// The events as PostgreSQL's CREATE TRIGGER writes them, in its order.
    pub fn event_words(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.events & events::INSERT != 0 {
            out.push("INSERT".to_owned());
        }
        if self.events & events::DELETE != 0 {
            out.push("DELETE".to_owned());
        }
        if self.events & events::UPDATE != 0 {
            out.push(if self.columns.is_empty() {
                "UPDATE".to_owned()
            } else {
                format!("UPDATE OF {}", self.columns.join(", "))
            });
        }
        if self.events & events::TRUNCATE != 0 {
            out.push("TRUNCATE".to_owned());
        }
        out
    }
}

/// A trigger's transition table while its function runs: the rows its
/// statement changed, before (OLD TABLE) or after (NEW TABLE), without
/// their row ids.
#[derive(Clone, Debug)]
pub struct TransitionTable {
    pub name: String,
    pub columns: Vec<(String, snapscale_values::SqlType)>,
    pub rows: std::sync::Arc<Vec<std::sync::Arc<[snapscale_values::Value]>>>,
}

impl TransitionTable {
    /// The work table id statements read it by: from its name, with the
    /// top bit set (no WITH item has such an id).
    pub fn id_of(name: &str) -> usize {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        name.hash(&mut h);
        (h.finish() as usize) | (1 << (usize::BITS - 1))
    }
}
