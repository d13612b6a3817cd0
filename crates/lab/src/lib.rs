//! snapscale's lab: experiments that reproduce the seed documents' measurements.
pub mod report;
