//! The three kinds of failure nicsim reports to a user.
//!
//! * [`ConfigError`] — the scenario is wrong: it names the field path
//!   (`links[0].rate`) and the reason. Python raises `nicsim.ScenarioError`.
//! * [`Error::Simulation`] — the run itself failed (a byte-stream mismatch,
//!   the workload did not finish before the time limit).
//! * [`Error::Io`] — a file could not be read or written.
//!
//! Invariant violations inside the simulator are bugs and use `assert!`.

use std::fmt;

/// A scenario error: where in the file, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// Dotted field path, e.g. `hosts[1].tcp.rx_buffer`; empty for the whole file.
    pub path: String,
    /// What is wrong, in words a user can act on.
    pub reason: String,
}

impl ConfigError {
    /// An error at `path` with `reason`.
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        ConfigError { path: path.into(), reason: reason.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.reason)
        } else {
            write!(f, "{}: {}", self.path, self.reason)
        }
    }
}

impl std::error::Error for ConfigError {}

/// Everything that can go wrong in a nicsim run.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scenario is invalid.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The simulation ran but failed (fatal for the run).
    #[error("simulation failed: {0}")]
    Simulation(String),
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file concerned.
        path: String,
        /// The operating system's message.
        message: String,
    },
}

impl Error {
    /// An I/O error about `path`.
    pub fn io(path: impl fmt::Display, err: impl fmt::Display) -> Self {
        Error::Io { path: path.to_string(), message: err.to_string() }
    }
}
