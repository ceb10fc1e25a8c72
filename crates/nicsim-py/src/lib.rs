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
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::rc::Rc;

use nicsim_core::engine::units::{Bandwidth, Frequency};
use nicsim_core::engine::{Dur, Time};
use nicsim_core::host::timing;
use nicsim_core::nic::risc;
use nicsim_core::nic::LroClass;
use nicsim_core::probe::observer::{Observer, ProbeEvent as CoreEvent, Recording, EVENTS};
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
/// made once, the first exception a callable raised, and the events asked
/// to be recorded rather than called for.
struct Probes {
    callbacks: [Option<Py<PyAny>>; EVENTS.len()],
    hosts: Vec<(String, Py<PyString>)>,
    error: Option<PyErr>,
    recording: Recording,
}

/// Index of probe name `key` in [`EVENTS`], or the error naming the valid ones.
fn event_index(key: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    let name: String =
        key.extract().map_err(|_| PyTypeError::new_err(format!("{what} names are strings, not {key:?}")))?;
    EVENTS
        .iter()
        .position(|e| *e == name)
        .ok_or_else(|| PyValueError::new_err(format!("unknown {what} \"{name}\"; {what}s are: {}", EVENTS.join(", "))))
}

impl Probes {
    /// Check a `{name: callable}` dict and a list of names to record against [`EVENTS`].
    fn new(dict: Option<&Bound<'_, PyDict>>, record: Option<&Bound<'_, PyAny>>) -> PyResult<Probes> {
        let mut callbacks = [const { None }; EVENTS.len()];
        for (key, value) in dict.map(|d| d.iter().collect::<Vec<_>>()).unwrap_or_default() {
            let i = event_index(&key, "probe")?;
            if !value.is_callable() {
                return Err(PyTypeError::new_err(format!("probe \"{}\" is not callable", EVENTS[i])));
            }
            callbacks[i] = Some(value.unbind());
        }
        let mut names = Vec::new();
        if let Some(record) = record {
            if record.is_instance_of::<PyString>() {
                return Err(PyTypeError::new_err("record takes a list of event names, not one string"));
            }
            for key in record.try_iter()? {
                names.push(EVENTS[event_index(&key?, "probe")?]);
            }
        }
        Ok(Probes { callbacks, hosts: Vec::new(), error: None, recording: Recording::of(names) })
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
/// callables, the recording and the error back whether the run succeeds or not.
struct PyObserver(Rc<RefCell<Probes>>);

impl Observer for PyObserver {
    fn wants(&self, name: &str) -> bool {
        let probes = self.0.borrow();
        probes.recording.wants(name)
            || EVENTS.iter().position(|e| *e == name).is_some_and(|i| probes.callbacks[i].is_some())
    }

    fn on_event(&mut self, event: &CoreEvent<'_>) {
        let mut probes = self.0.borrow_mut();
        probes.recording.record(event);
        let i = event.kind;
        if probes.error.is_some() || probes.callbacks[i].is_none() {
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
///
/// With `record` (a list of event names) it returns `(json, hosts,
/// series)` instead: `series` maps each recorded name to `(fields,
/// time_ps, host, values)`, the last three as little-endian bytes of
/// `u64`, `u32` (an index into `hosts`) and `f64` (`len(fields)` per event).
#[pyfunction]
#[pyo3(signature = (text, source = "<string>", seed = None, pcap_dir = None, probes = None, progress = None, record = None))]
#[allow(clippy::too_many_arguments)]
fn run_scenario(
    py: Python<'_>,
    text: &str,
    source: &str,
    seed: Option<u64>,
    pcap_dir: Option<PathBuf>,
    probes: Option<&Bound<'_, PyDict>>,
    progress: Option<Py<PyAny>>,
    record: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let opts = RunOptions { source: source.to_owned(), seed, pcap_dir };
    let text = text.to_owned();
    let recording = record.is_some();
    let probes = (probes.is_some() || recording).then(|| Probes::new(probes, record)).transpose()?;
    if probes.is_none() && progress.is_none() {
        let json = py
            .detach(move || nicsim_core::run_toml(&text, &opts).map(|report| report.to_json()))
            .map_err(|e| to_py_err(py, e))?;
        return Ok(PyString::new(py, &json).into_any().unbind());
    }
    let (outcome, probes, progress_error) = py.detach(move || {
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
        let probes =
            shared.map(|s| Rc::into_inner(s).expect("the core drops the observer before returning").into_inner());
        let progress_error = failed.borrow_mut().take();
        (outcome, probes, progress_error)
    });
    let (probe_error, recorded) = match probes {
        Some(p) => (p.error, Some(p.recording)),
        None => (None, None),
    };
    // A callback's exception comes first: it happened during the run.
    if let Some(e) = probe_error.or(progress_error) {
        return Err(e);
    }
    let json = outcome.map_err(|e| to_py_err(py, e))?;
    match recorded.filter(|_| recording) {
        None => Ok(PyString::new(py, &json).into_any().unbind()),
        Some(r) => recording_to_py(py, &json, &r),
    }
}

/// A Python `bytes` of the little-endian bytes of `xs`, one after the other,
/// written in place.
fn le_bytes<'py, T: Copy, const N: usize>(
    py: Python<'py>,
    xs: &[T],
    bytes: impl Fn(T) -> [u8; N],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, xs.len() * N, |out| {
        for (chunk, &x) in out.chunks_exact_mut(N).zip(xs) {
            chunk.copy_from_slice(&bytes(x));
        }
        Ok(())
    })
}

/// `(json, hosts, {name: (fields, time_ps, host, values)})` for a recorded run.
fn recording_to_py(py: Python<'_>, json: &str, r: &Recording) -> PyResult<Py<PyAny>> {
    let series = PyDict::new(py);
    for (name, s) in EVENTS.iter().zip(&r.series) {
        let Some(s) = s else { continue };
        let time = le_bytes(py, &s.time_ps, u64::to_le_bytes)?;
        let host = le_bytes(py, &s.host, u32::to_le_bytes)?;
        let values = le_bytes(py, &s.values, f64::to_le_bytes)?;
        let fields = s.fields.clone();
        series.set_item(name, (fields, time, host, values))?;
    }
    Ok((json, r.hosts.clone(), series).into_pyobject(py)?.into_any().unbind())
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
/// sees to `output` and return the statistics as JSON. `flush_packets` and
/// `cam_entries` override the NIC engine's window and CAM size (default:
/// the study's 20 and 64). `assume_checksums_ok` treats TCP checksums left
/// to the NIC (zero or the pseudo-header sum) as good and writes them in.
/// The input may be pcap or pcapng; the output has the input's format.
#[pyfunction]
#[pyo3(signature = (input, output, engine = "nic", batch_gap_us = 20.0, flush_packets = None, cam_entries = None, assume_checksums_ok = false))]
#[allow(clippy::too_many_arguments)]
fn coalesce_pcap(
    py: Python<'_>,
    input: PathBuf,
    output: PathBuf,
    engine: &str,
    batch_gap_us: f64,
    flush_packets: Option<u32>,
    cam_entries: Option<usize>,
    assume_checksums_ok: bool,
) -> PyResult<String> {
    use nicsim_core::nic::capture::{CaptureOptions, Engine};
    use nicsim_core::nic::lro::LroConfig;
    if !(batch_gap_us.is_finite() && batch_gap_us >= 0.0) {
        return Err(PyValueError::new_err(format!("batch_gap_us must be a non-negative number, not {batch_gap_us}")));
    }
    if flush_packets == Some(0) {
        return Err(scenario_error(py, &ConfigError::new("flush_packets", "must be at least 1 frame")));
    }
    if cam_entries == Some(0) {
        return Err(scenario_error(py, &ConfigError::new("cam_entries", "must be at least 1 entry")));
    }
    let sized = flush_packets.is_some() || cam_entries.is_some();
    let engine = match engine {
        "nic" if sized => {
            let d = LroConfig::default();
            Engine::NicWith(LroConfig {
                flush_packets: flush_packets.unwrap_or(d.flush_packets),
                cam_entries: cam_entries.unwrap_or(d.cam_entries),
                ..d
            })
        }
        "nic" => Engine::Nic,
        "gro" if sized => {
            return Err(PyValueError::new_err("flush_packets and cam_entries apply to the nic engine only"));
        }
        "gro" => Engine::Gro { batch_gap_ns: (batch_gap_us * 1000.0).round() as u64 },
        other => return Err(PyValueError::new_err(format!("unknown engine \"{other}\"; engines are: nic, gro"))),
    };
    let options = CaptureOptions { assume_checksums_ok };
    py.detach(|| nicsim_core::nic::capture::coalesce_capture(&input, &output, engine, options).map(|r| r.to_json()))
        .map_err(|e| to_py_err(py, e))
}

/// A `risc` error as a `ScenarioError` naming the keyword argument
/// (`core_clock` → `core_clock_hz`, `line_rate` → `line_rate_bps`, …).
fn risc_error(py: Python<'_>, e: ConfigError) -> PyErr {
    let path = match e.path.as_str() {
        "core_clock" => "core_clock_hz",
        "dma_clock" => "dma_clock_hz",
        "line_rate" => "line_rate_bps",
        "clock" => "clock_hz",
        "window" => "window_s",
        other => other,
    };
    scenario_error(py, &ConfigError::new(path, e.reason))
}

/// The NIC core's knobs from keyword arguments: the DMA at `dma_ratio` ×
/// the core clock or at `dma_clock_hz` (default: 5×, the study's Table I),
/// `program` overriding busy instructions per class name, `shape` the
/// bus/program knobs (DMA clocks a word, prologue, bus-free prologue
/// instructions; the study's fit is `(1, 15, 2)`).
fn risc_core(
    core_clock_hz: u64,
    dma_ratio: Option<f64>,
    dma_clock_hz: Option<u64>,
    shape: (u64, u64, u64),
    program: Option<BTreeMap<String, u64>>,
) -> Result<risc::CoreConfig, ConfigError> {
    let dma = match (dma_ratio, dma_clock_hz) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::new("dma_clock_hz", "give dma_ratio or dma_clock_hz, not both"));
        }
        (Some(r), None) => risc::DmaClock::Ratio(r),
        (None, Some(hz)) => risc::DmaClock::Fixed(Frequency(hz)),
        (None, None) => risc::DmaClock::Ratio(5.0),
    };
    let mut core = risc::CoreConfig::study(Frequency(core_clock_hz), dma);
    (core.word_cycles, core.prologue, core.prologue_free) = shape;
    for (name, n) in program.unwrap_or_default() {
        let Some(class) = risc::class_by_name(&name) else {
            return Err(ConfigError::new(
                format!("program.{name}"),
                "unknown class; classes are BOM, COM, EOM, SSM, OOP",
            ));
        };
        let i = LroClass::ALL.iter().position(|c| *c == class).expect("in ALL");
        core.program[i] = n;
    }
    core.validate("")?;
    Ok(core)
}

/// A class pattern from names (default: the bulk pattern, 1 BOM, 18 COM, 1 EOM).
fn risc_pattern(pattern: Option<Vec<String>>) -> Result<Vec<LroClass>, ConfigError> {
    let Some(names) = pattern else { return Ok(risc::bulk_pattern()) };
    if names.is_empty() {
        return Err(ConfigError::new("pattern", "needs at least one class"));
    }
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            risc::class_by_name(n).ok_or_else(|| {
                ConfigError::new(
                    format!("pattern[{i}]"),
                    format!("unknown class \"{n}\"; classes are BOM, COM, EOM, SSM, OOP"),
                )
            })
        })
        .collect()
}

/// The line: rate and per-frame overheads in bytes.
fn risc_line(
    line_rate_bps: u64,
    buffers: usize,
    framing: u64,
    preamble: u64,
    ifg: u64,
) -> Result<risc::LineConfig, ConfigError> {
    let line = risc::LineConfig { rate: Bandwidth(line_rate_bps), framing, preamble, ifg, buffers };
    line.validate("")?;
    Ok(line)
}

/// The keyword arguments `risc_simulate` and `risc_min_clock` share: the NIC
/// core's knobs (see [`risc_core`]) and the line's (see [`risc_line`]), each
/// with its default when absent or `None`.
struct RiscKnobs {
    dma_ratio: Option<f64>,
    dma_clock_hz: Option<u64>,
    shape: (u64, u64, u64),
    program: Option<BTreeMap<String, u64>>,
    buffers: usize,
    framing: u64,
    preamble: u64,
    ifg: u64,
}

impl RiscKnobs {
    const NAMES: [&'static str; 10] = [
        "dma_ratio",
        "dma_clock_hz",
        "word_cycles",
        "prologue",
        "prologue_free",
        "program",
        "buffers",
        "framing",
        "preamble",
        "ifg",
    ];

    fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<RiscKnobs> {
        let Some(kwargs) = kwargs else { return RiscKnobs::with(|_| Ok(None)) };
        for key in kwargs.keys() {
            let key: String = key.extract()?;
            if !RiscKnobs::NAMES.contains(&key.as_str()) {
                return Err(PyTypeError::new_err(format!("unexpected keyword argument '{key}'")));
            }
        }
        RiscKnobs::with(|name| match kwargs.get_item(name)? {
            Some(v) if !v.is_none() => Ok(Some(v)),
            _ => Ok(None),
        })
    }

    /// The knobs, each from `arg(name)` or its default.
    fn with<'py>(arg: impl Fn(&str) -> PyResult<Option<Bound<'py, PyAny>>>) -> PyResult<RiscKnobs> {
        fn get<'py, T: for<'a> FromPyObject<'a, 'py>>(
            arg: &impl Fn(&str) -> PyResult<Option<Bound<'py, PyAny>>>,
            name: &str,
        ) -> PyResult<Option<T>> {
            arg(name)?
                .map(|v| v.extract::<T>().map_err(|e| PyTypeError::new_err(format!("argument '{name}': {}", e.into()))))
                .transpose()
        }
        Ok(RiscKnobs {
            dma_ratio: get(&arg, "dma_ratio")?,
            dma_clock_hz: get(&arg, "dma_clock_hz")?,
            shape: (
                get(&arg, "word_cycles")?.unwrap_or(1),
                get(&arg, "prologue")?.unwrap_or(15),
                get(&arg, "prologue_free")?.unwrap_or(2),
            ),
            program: get(&arg, "program")?,
            buffers: get(&arg, "buffers")?.unwrap_or(2),
            framing: get(&arg, "framing")?.unwrap_or(18),
            preamble: get(&arg, "preamble")?.unwrap_or(8),
            ifg: get(&arg, "ifg")?.unwrap_or(12),
        })
    }

    /// The core at `core_clock_hz` and the line at `line_rate_bps`.
    fn build(
        self,
        core_clock_hz: u64,
        line_rate_bps: u64,
    ) -> Result<(risc::CoreConfig, risc::LineConfig), ConfigError> {
        let core = risc_core(core_clock_hz, self.dma_ratio, self.dma_clock_hz, self.shape, self.program)?;
        let line = risc_line(line_rate_bps, self.buffers, self.framing, self.preamble, self.ifg)?;
        Ok((core, line))
    }
}

fn frame_dict<'py>(py: Python<'py>, core: &risc::CoreConfig, f: &risc::FrameCycles) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("class", f.class.name())?;
    d.set_item("size", f.size)?;
    d.set_item("moved_bytes", f.moved_bytes)?;
    d.set_item("bus_cycles", f.bus_cycles)?;
    d.set_item("dma_core_cycles", f.dma_core_cycles)?;
    d.set_item("busy", f.busy)?;
    d.set_item("bus_instructions", f.bus_instructions)?;
    d.set_item("prologue", f.prologue)?;
    d.set_item("during", f.during)?;
    d.set_item("tail", f.tail)?;
    d.set_item("overlapped", f.overlapped)?;
    d.set_item("idle", f.idle)?;
    d.set_item("total", f.total)?;
    d.set_item("time_ns", core.frame_ps(f) as f64 / 1e3)?;
    Ok(d)
}

/// Core cycles per frame of IP length `size` for each class (or those in
/// `classes`), with the DMA at `dma_ratio` × the core clock or at
/// `dma_clock_hz`: a list of dicts with `class`, `busy`, `idle`, `total`,
/// the bus cycles and the DMA/core ratio at which idle vanishes.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (size, core_clock_hz = 1_000_000_000, dma_ratio = None, dma_clock_hz = None, word_cycles = 1, prologue = 15, prologue_free = 2, program = None, classes = None))]
fn risc_cycles<'py>(
    py: Python<'py>,
    size: u64,
    core_clock_hz: u64,
    dma_ratio: Option<f64>,
    dma_clock_hz: Option<u64>,
    word_cycles: u64,
    prologue: u64,
    prologue_free: u64,
    program: Option<BTreeMap<String, u64>>,
    classes: Option<Vec<String>>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let core = risc_core(core_clock_hz, dma_ratio, dma_clock_hz, (word_cycles, prologue, prologue_free), program)
        .map_err(|e| risc_error(py, e))?;
    let classes = match classes {
        None => LroClass::ALL.to_vec(),
        Some(names) => risc_pattern(Some(names))
            .map_err(|e| scenario_error(py, &ConfigError::new(e.path.replacen("pattern", "classes", 1), e.reason)))?,
    };
    classes
        .into_iter()
        .map(|class| {
            let d = frame_dict(py, &core, &core.frame(class, size))?;
            d.set_item("idle_free_ratio", core.idle_free_ratio(class, size))?;
            d.set_item("core_clock_hz", core.clock.0)?;
            d.set_item("dma_clock_hz", core.dma_hz())?;
            Ok(d)
        })
        .collect()
}

/// Simulate `packets` frames of IP length `size` arriving back to back at
/// `line_rate_bps` (classes cycling through `pattern`, default the bulk
/// pattern) through the two RBI buffers and the core; or the given
/// `arrivals` as `(start_ps, size, class)`. Returns totals, drops and one
/// dict per processed frame.
#[pyfunction]
#[pyo3(signature = (size, line_rate_bps, core_clock_hz, packets = 1000, pattern = None, host_dma = false, arrivals = None, **knobs))]
#[allow(clippy::too_many_arguments)]
fn risc_simulate<'py>(
    py: Python<'py>,
    size: u64,
    line_rate_bps: u64,
    core_clock_hz: u64,
    packets: usize,
    pattern: Option<Vec<String>>,
    host_dma: bool,
    arrivals: Option<Vec<(u64, u64, String)>>,
    knobs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let err = |e: ConfigError| risc_error(py, e);
    let (core, line) = RiscKnobs::from_kwargs(knobs)?.build(core_clock_hz, line_rate_bps).map_err(err)?;
    let stream = match arrivals {
        Some(list) => list
            .into_iter()
            .enumerate()
            .map(|(i, (start, size, class))| {
                let class = risc::class_by_name(&class).ok_or_else(|| {
                    ConfigError::new(format!("arrivals[{i}].class"), format!("unknown class \"{class}\""))
                })?;
                Ok(risc::Arrival { start: Time(start), size, class })
            })
            .collect::<Result<Vec<_>, ConfigError>>()
            .map_err(err)?,
        None => line.back_to_back(size, &risc_pattern(pattern).map_err(err)?, packets),
    };
    let cfg = risc::SimConfig { core, line, host_dma };
    let report = py.detach(|| risc::simulate(&cfg, &stream)).map_err(err)?;
    let d = PyDict::new(py);
    d.set_item("offered", report.offered)?;
    d.set_item("processed", report.frames.len())?;
    d.set_item("drops", report.drops())?;
    d.set_item("dropped", report.dropped.clone())?;
    d.set_item("busy_cycles", report.busy_cycles)?;
    d.set_item("idle_cycles", report.idle_cycles)?;
    d.set_item("busy_share", report.busy_share())?;
    d.set_item("idle_share", report.idle_share())?;
    d.set_item("span_ps", report.span_ps)?;
    d.set_item("host_transfers", report.host_transfers.len())?;
    d.set_item("host_bytes", report.host_transfers.iter().map(|t| t.bytes).sum::<u64>())?;
    d.set_item("rb_drops", report.rb_drops)?;
    let frames = report
        .frames
        .iter()
        .map(|f| {
            let fd = frame_dict(py, &cfg.core, &f.cycles)?;
            fd.set_item("index", f.index)?;
            fd.set_item("complete_ps", f.complete.0)?;
            fd.set_item("start_ps", f.start.0)?;
            fd.set_item("end_ps", f.end.0)?;
            Ok(fd)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("frames", frames)?;
    Ok(d)
}

/// The lowest core clock (to 1 MHz) at which `packets` frames of IP length
/// `size` arriving back to back at `line_rate_bps` see no RBI overrun,
/// found by bisection over simulations; the DMA at `dma_ratio` × the core
/// clock or at `dma_clock_hz`.
#[pyfunction]
#[pyo3(signature = (size, line_rate_bps, packets = 2000, pattern = None, host_dma = false, **knobs))]
fn risc_min_clock<'py>(
    py: Python<'py>,
    size: u64,
    line_rate_bps: u64,
    packets: usize,
    pattern: Option<Vec<String>>,
    host_dma: bool,
    knobs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyDict>> {
    let err = |e: ConfigError| risc_error(py, e);
    let (core, line) = RiscKnobs::from_kwargs(knobs)?.build(1_000_000, line_rate_bps).map_err(err)?;
    let pattern = risc_pattern(pattern).map_err(err)?;
    let cfg = risc::SimConfig { core, line, host_dma };
    let m = py.detach(|| risc::min_core_clock(&cfg, size, &pattern, packets)).map_err(err)?;
    let d = PyDict::new(py);
    d.set_item("clock_hz", m.clock.0)?;
    d.set_item("clock_mhz", m.clock.0 / 1_000_000)?;
    d.set_item("frames", m.frames)?;
    d.set_item("probes", m.probes)?;
    d.set_item("drops_below", m.drops_below)?;
    d.set_item("mean_total_cycles", m.mean_total_cycles)?;
    d.set_item("mean_idle_cycles", m.mean_idle_cycles)?;
    d.set_item("arrival_interval_ns", m.arrival_interval_ps / 1e3)?;
    Ok(d)
}

/// Software LRO on the host at `line_rate_bps` with IP packets of `size`
/// bytes (plus `overhead` bytes on the wire), `cycles` per packet on a
/// `clock_hz` core: packets/s, the share of one core by arithmetic and as
/// measured on nicsim's CPU model over `window_s` seconds.
#[pyfunction]
#[pyo3(signature = (line_rate_bps = 10_000_000_000, size = 1500, clock_hz = 4_000_000_000, cycles = 2927, overhead = 38, window_s = 0.01))]
fn host_lro<'py>(
    py: Python<'py>,
    line_rate_bps: u64,
    size: u64,
    clock_hz: u64,
    cycles: u64,
    overhead: u64,
    window_s: f64,
) -> PyResult<Bound<'py, PyDict>> {
    if !(window_s.is_finite() && window_s > 0.0 && window_s <= 10.0) {
        return Err(scenario_error(
            py,
            &ConfigError::new("window_s", format!("must be above 0 and at most 10 s, got {window_s}")),
        ));
    }
    let host = risc::HostLro { clock: Frequency(clock_hz), cost: timing::Cost { cycles, mem: 0 }, overhead };
    let window = Dur((window_s * 1e12).round() as u64);
    let l = py.detach(|| host.load(Bandwidth(line_rate_bps), size, window)).map_err(|e| risc_error(py, e))?;
    let d = PyDict::new(py);
    d.set_item("packets_per_s", l.packets_per_s)?;
    d.set_item("cycles_per_packet", l.cycles_per_packet)?;
    d.set_item("share", l.share)?;
    d.set_item("simulated_share", l.simulated_share)?;
    d.set_item("simulated_packets", l.simulated_packets)?;
    Ok(d)
}

/// Nanoseconds between frame starts at `line_rate_bps` for `frame` bytes
/// plus `overhead` (preamble/SFD 8 + gap 12 by default).
#[pyfunction]
#[pyo3(signature = (line_rate_bps, frame, overhead = 20))]
fn risc_budget_ns(py: Python<'_>, line_rate_bps: u64, frame: u64, overhead: u64) -> PyResult<f64> {
    if line_rate_bps == 0 {
        return Err(scenario_error(py, &ConfigError::new("line_rate_bps", "must be above 0 bit/s")));
    }
    Ok(risc::budget_ns(Bandwidth(line_rate_bps), frame, overhead))
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
    m.add_function(wrap_pyfunction!(risc_cycles, m)?)?;
    m.add_function(wrap_pyfunction!(risc_simulate, m)?)?;
    m.add_function(wrap_pyfunction!(risc_min_clock, m)?)?;
    m.add_function(wrap_pyfunction!(risc_budget_ns, m)?)?;
    m.add_function(wrap_pyfunction!(host_lro, m)?)?;
    Ok(())
}
