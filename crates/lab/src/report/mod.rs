//! Turning an experiment's measurements into files a reader can check.
//!
//! Every experiment ends the same way: a CSV for anyone who wants to redo the
//! analysis, an SVG figure for the eye, and a Markdown page that records what
//! was measured, where, and with which settings. [`ResultSet`] writes all
//! three so each experiment only has to build a [`table::Table`] and a
//! [`plot::Figure`].

pub mod machine;
pub mod plot;
pub mod progress;
pub mod stats;
pub mod table;

mod result_set;
mod utc;

pub use result_set::{ResultSet, Written};
