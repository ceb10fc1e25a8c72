//! `nicsim._core`: the thin PyO3 binding over `nicsim_core`.
//!
//! Plain data crosses the boundary: TOML text in, JSON text out. Every
//! simulation runs with the GIL released. Core errors become Python
//! exceptions: a scenario error is `nicsim.ScenarioError` (a `ValueError`
//! carrying `path` and `reason`), a failed run is `nicsim.SimulationError`
//! (a `RuntimeError`), an I/O failure is `OSError`. `pattern_bytes`
//! regenerates the payload a run sent, for checking traces.
//!
//! Probes are Python callables fed named events during a run: the run stays
//! detached from the interpreter and attaches only for each call. The first
//! exception a probe raises silences every later call and is raised once
//! the run returns.

use std::cell::RefCell;
use std::path::PathBuf;
use std::rc::Rc;

use nicsim_core::host::timing;
use nicsim_core::probe::observer::{Observer, ProbeEvent as CoreEvent, EVENTS};
use nicsim_core::{ConfigError, Error, RunOptions};
use pyo3::exceptions::{PyKeyError, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple};

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

/// One event a probe asked for: its name, simulated time, host and numeric
/// fields (`event["bytes"]`).
#[pyclass(frozen, module = "nicsim._core")]
struct ProbeEvent {
    /// Event name, one of `PROBE_EVENTS`.
    #[pyo3(get)]
    name: &'static str,
    /// Simulated time in picoseconds (exact).
    #[pyo3(get)]
    time_ps: u64,
    /// Host concerned.
    #[pyo3(get)]
    host: Py<PyString>,
    fields: Vec<(&'static str, f64)>,
}

#[pymethods]
impl ProbeEvent {
    /// Simulated time in seconds.
    #[getter]
    fn time_s(&self) -> f64 {
        self.time_ps as f64 / 1e12
    }

    /// The numeric fields as a new dict.
    #[getter]
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (key, value) in &self.fields {
            dict.set_item(key, value)?;
        }
        Ok(dict)
    }

    fn __getitem__(&self, key: &str) -> PyResult<f64> {
        self.fields.iter().find(|(k, _)| *k == key).map(|(_, v)| *v).ok_or_else(|| {
            let names: Vec<&str> = self.fields.iter().map(|(k, _)| *k).collect();
            PyKeyError::new_err(format!("{} events have no field \"{key}\"; fields: {}", self.name, names.join(", ")))
        })
    }

    fn __repr__(&self) -> String {
        let fields: Vec<String> = self.fields.iter().map(|(k, v)| format!(", {k}={v}")).collect();
        format!("ProbeEvent({} at {} ps on {}{})", self.name, self.time_ps, self.host, fields.concat())
    }
}

/// The probes of one run: a callable per wanted event name, the host names
/// made once, and the first exception a callable raised.
struct Probes {
    callbacks: [Option<Py<PyAny>>; EVENTS.len()],
    hosts: Vec<(String, Py<PyString>)>,
    error: Option<PyErr>,
}

impl Probes {
    /// Check a `{name: callable}` dict against [`EVENTS`].
    fn from_dict(dict: &Bound<'_, PyDict>) -> PyResult<Probes> {
        let mut callbacks = [const { None }; EVENTS.len()];
        for (key, value) in dict.iter() {
            let name: String =
                key.extract().map_err(|_| PyTypeError::new_err(format!("probe names are strings, not {key:?}")))?;
            let Some(i) = EVENTS.iter().position(|e| *e == name) else {
                return Err(PyValueError::new_err(format!(
                    "unknown probe \"{name}\"; probes are: {}",
                    EVENTS.join(", ")
                )));
            };
            if !value.is_callable() {
                return Err(PyTypeError::new_err(format!("probe \"{name}\" is not callable")));
            }
            callbacks[i] = Some(value.unbind());
        }
        Ok(Probes { callbacks, hosts: Vec::new(), error: None })
    }

    /// The Python string for host `name`, made on first use.
    fn host(&mut self, py: Python<'_>, name: &str) -> Py<PyString> {
        if let Some((_, s)) = self.hosts.iter().find(|(n, _)| n == name) {
            return s.clone_ref(py);
        }
        let s = PyString::new(py, name).unbind();
        self.hosts.push((name.to_owned(), s.clone_ref(py)));
        s
    }

    fn call(&mut self, py: Python<'_>, i: usize, event: &CoreEvent<'_>) -> PyResult<()> {
        let host = self.host(py, event.host);
        let Some(callback) = &self.callbacks[i] else { return Ok(()) };
        let event = ProbeEvent { name: event.name, time_ps: event.time.ps(), host, fields: event.fields.to_vec() };
        callback.call1(py, (event,)).map(drop)
    }
}

/// The core's view of [`Probes`]; shared so that the binding gets the
/// callables and the error back whether the run succeeds or not.
struct PyObserver(Rc<RefCell<Probes>>);

impl Observer for PyObserver {
    fn wants(&self, name: &str) -> bool {
        EVENTS.iter().position(|e| *e == name).is_some_and(|i| self.0.borrow().callbacks[i].is_some())
    }

    fn on_event(&mut self, event: &CoreEvent<'_>) {
        let mut probes = self.0.borrow_mut();
        let Some(i) = EVENTS.iter().position(|e| *e == event.name) else { return };
        if probes.error.is_some() {
            return;
        }
        if let Err(e) = Python::attach(|py| probes.call(py, i, event)) {
            probes.error = Some(e);
        }
    }

    fn stopped(&self) -> bool {
        self.0.borrow().error.is_some()
    }
}

/// Parse, validate and run a scenario given as TOML text; return the result
/// as pretty JSON. `source` names the file in messages and in the result,
/// `seed` overrides the scenario's seed, `pcap_dir` asks for one pcap per
/// link, `probes` maps event names (`PROBE_EVENTS`) to callables that get
/// each such event as a `ProbeEvent`, and `progress` is called now and then
/// with `(sim_time_s, done, total, events)` (`total` None when unknown).
#[pyfunction]
#[pyo3(signature = (text, source = "<string>", seed = None, pcap_dir = None, probes = None, progress = None))]
fn run_scenario(
    py: Python<'_>,
    text: &str,
    source: &str,
    seed: Option<u64>,
    pcap_dir: Option<PathBuf>,
    probes: Option<&Bound<'_, PyDict>>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let opts = RunOptions { source: source.to_owned(), seed, pcap_dir };
    let text = text.to_owned();
    let probes = probes.map(Probes::from_dict).transpose()?;
    if probes.is_none() && progress.is_none() {
        return py
            .detach(move || nicsim_core::run_toml(&text, &opts).map(|report| report.to_json()))
            .map_err(|e| to_py_err(py, e));
    }
    let (outcome, probe_error, progress_error) = py.detach(move || {
        let shared = probes.map(|p| Rc::new(RefCell::new(p)));
        let observer = shared.as_ref().map(|s| Box::new(PyObserver(Rc::clone(s))) as Box<dyn Observer>);
        let failed: Rc<RefCell<Option<PyErr>>> = Rc::default();
        let outcome = match progress {
            Some(callback) => {
                let failed = Rc::clone(&failed);
                let hook = Box::new(move |p: &nicsim_core::sim::Progress| {
                    if failed.borrow().is_some() {
                        return;
                    }
                    let args = (p.sim_time_s, p.done, p.total, p.events);
                    if let Err(e) = Python::attach(|py| callback.call1(py, args).map(|_| ())) {
                        *failed.borrow_mut() = Some(e);
                    }
                });
                nicsim_core::api::run_toml_progress(&text, &opts, observer, hook)
            }
            None => nicsim_core::api::run_toml_observed(&text, &opts, observer.expect("probes were given"))
                .map(|(report, observer)| (report, Some(observer))),
        }
        .map(|(report, _observer)| report.to_json());
        let probe_error = shared
            .and_then(|s| Rc::into_inner(s).expect("the core drops the observer before returning").into_inner().error);
        let progress_error = failed.borrow_mut().take();
        (outcome, probe_error, progress_error)
    });
    // A callback's exception comes first: it happened during the run.
    if let Some(e) = probe_error.or(progress_error) {
        return Err(e);
    }
    outcome.map_err(|e| to_py_err(py, e))
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

/// The built-in timing profiles as `(name, description)`.
#[pyfunction]
fn profiles(py: Python<'_>) -> PyResult<Vec<(&'static str, String)>> {
    timing::BUILTIN
        .iter()
        .map(|(name, _)| {
            timing::resolve("profile", name, &[]).map(|t| (*name, t.description)).map_err(|e| scenario_error(py, &e))
        })
        .collect()
}

/// The TOML text of built-in profile `name`, or `None` if there is none.
#[pyfunction]
fn profile_text(name: &str) -> Option<&'static str> {
    timing::builtin(name)
}

/// Coalesce the Ethernet pcap `input` with the NIC LRO engine (`"nic"`,
/// flushed at the end) or host GRO (`"gro"`, frames less than
/// `batch_gap_us` apart form one poll batch); write the frames the host
/// sees to `output` and return the statistics as JSON.
#[pyfunction]
#[pyo3(signature = (input, output, engine = "nic", batch_gap_us = 20.0))]
fn coalesce_pcap(py: Python<'_>, input: PathBuf, output: PathBuf, engine: &str, batch_gap_us: f64) -> PyResult<String> {
    use nicsim_core::nic::lro::Engine;
    if !(batch_gap_us.is_finite() && batch_gap_us >= 0.0) {
        return Err(PyValueError::new_err(format!("batch_gap_us must be a non-negative number, not {batch_gap_us}")));
    }
    let engine = match engine {
        "nic" => Engine::Nic,
        "gro" => Engine::Gro { batch_gap_ns: (batch_gap_us * 1000.0).round() as u64 },
        other => return Err(PyValueError::new_err(format!("unknown engine \"{other}\"; engines are: nic, gro"))),
    };
    py.detach(|| nicsim_core::nic::lro::coalesce_pcap(&input, &output, engine).map(|r| r.to_json()))
        .map_err(|e| to_py_err(py, e))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("PROBE_EVENTS", PyTuple::new(py, EVENTS)?)?;
    m.add_class::<ProbeEvent>()?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(resolve_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(pattern_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(profile_text, m)?)?;
    m.add_function(wrap_pyfunction!(coalesce_pcap, m)?)?;
    Ok(())
}
