//! Fuzz target `tso`: see `nicsim_testkit::fuzz::tso` for the input and the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nicsim_testkit::fuzz::tso(data));
