//! `nicsim._core`: the thin PyO3 binding over `nicsim_core`.
//!
//! Plain data crosses the boundary: TOML text in, JSON text out. Every
//! simulation runs with the GIL released. Core errors become Python
//! exceptions: a scenario error is `nicsim.ScenarioError` (a `ValueError`
//! carrying `path` and `reason`), a failed run is `nicsim.SimulationError`
//! (a `RuntimeError`), an I/O failure is `OSError`. `pattern_bytes`
//! regenerates the payload a run sent, for checking traces.

use std::path::PathBuf;

use nicsim_core::{ConfigError, Error, RunOptions};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

pyo3::create_exception!(
    nicsim,
    ScenarioError,
    PyValueError,
    "The scenario is invalid; `path` names the field and `reason` says why."
);
pyo3::create_exception!(nicsim, SimulationError, PyRuntimeError, "The simulation ran but failed.");

/// Turn a core error into the matching Python exception.
fn to_py_err(py: Python<'_>, err: Error) -> PyErr {
    match err {
        Error::Config(config) => scenario_error(py, &config),
        Error::Simulation(_) => SimulationError::new_err(err.to_string()),
        Error::Io { path, message } => PyOSError::new_err(format!("{path}: {message}")),
    }
}

/// A `ScenarioError` whose `str()` is `"path: reason"`, with `path` and
/// `reason` as attributes.
fn scenario_error(py: Python<'_>, config: &ConfigError) -> PyErr {
    let err = ScenarioError::new_err(config.to_string());
    let value = err.value(py);
    if let Err(e) =
        value.setattr("path", config.path.as_str()).and_then(|()| value.setattr("reason", config.reason.as_str()))
    {
        return e;
    }
    err
}

/// The version of the Rust core, e.g. `"0.1.0"`.
#[pyfunction]
fn version() -> &'static str {
    nicsim_core::VERSION
}

/// Parse, validate and run a scenario given as TOML text; return the result
/// as pretty JSON. `source` names the file in messages and in the result,
/// `seed` overrides the scenario's seed, `pcap_dir` asks for one pcap per link.
#[pyfunction]
#[pyo3(signature = (text, source = "<string>", seed = None, pcap_dir = None))]
fn run_scenario(
    py: Python<'_>,
    text: &str,
    source: &str,
    seed: Option<u64>,
    pcap_dir: Option<PathBuf>,
) -> PyResult<String> {
    let opts = RunOptions { source: source.to_owned(), seed, pcap_dir };
    let text = text.to_owned();
    py.detach(move || nicsim_core::run_toml(&text, &opts).map(|report| report.to_json())).map_err(|e| to_py_err(py, e))
}

/// Parse and validate a scenario; return it fully resolved (defaults filled
/// in, units canonical) as JSON.
#[pyfunction]
#[pyo3(signature = (text, source = "<string>"))]
fn resolve_scenario(py: Python<'_>, text: &str, source: &str) -> PyResult<String> {
    nicsim_core::resolve_toml(text, source).map_err(|e| to_py_err(py, e))
}

/// `length` bytes of payload pattern stream `stream` of a run seeded with
/// `seed`, from byte `offset`: exactly what that stream's sender wrote.
#[pyfunction]
fn pattern_bytes(py: Python<'_>, seed: u64, stream: u64, offset: u64, length: usize) -> Bound<'_, PyBytes> {
    let bytes = py.detach(|| nicsim_core::api::pattern_bytes(seed, stream, offset, length));
    PyBytes::new(py, &bytes)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(pattern_bytes, m)?)?;
    Ok(())
}
