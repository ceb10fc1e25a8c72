//! Fuzz target `units`: see `nicsim_testkit::fuzz::units` for the input and the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nicsim_testkit::fuzz::units(data));
