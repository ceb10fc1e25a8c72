//! Fuzz target `wire_monitor`: see `nicsim_testkit::fuzz::wire_monitor` for the input and the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nicsim_testkit::fuzz::wire_monitor(data));
