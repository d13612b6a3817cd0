//! snapscale's lab: experiments that reproduce the seed documents'
//! measurements. Each writes a CSV, an SVG plot and a Markdown summary with
//! the machine and settings (see [`report`]).

mod child;
pub mod disk;
pub mod endurance;
pub mod hot_standby;
pub mod idle;
pub mod pgbench;
pub mod report;
pub mod sinval;
pub mod snapshots;
pub mod sysbench;
pub mod visibility;
