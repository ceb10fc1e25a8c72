//! The entry points the CLI and the Python binding call.
//!
//! Everything crossing this boundary is plain data: TOML text in, JSON text
//! out, so results are identical whatever process or machine ran them.

use std::path::PathBuf;

use crate::error::Error;

/// How to run a scenario (things that are not part of the scenario itself).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Where the scenario came from (a file path), for error messages and results.
    pub source: String,
    /// Overrides the scenario's `seed` when set.
    pub seed: Option<u64>,
    /// Write one pcap per link into this directory when set.
    pub pcap_dir: Option<PathBuf>,
}

/// The result of one run, serialisable to JSON.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    /// Placeholder until the simulator lands.
    pub nicsim_version: String,
}

impl Report {
    /// Pretty JSON, byte-identical for the same scenario and seed.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serialises")
    }
}

/// Parse, validate and run a scenario given as TOML text.
pub fn run_toml(_text: &str, _opts: &RunOptions) -> Result<Report, Error> {
    Err(Error::Simulation("not implemented yet".into()))
}

/// Parse and validate a scenario; return it fully resolved (defaults filled
/// in, units canonical) as JSON.
pub fn resolve_toml(_text: &str, _source: &str) -> Result<String, Error> {
    Err(Error::Simulation("not implemented yet".into()))
}
