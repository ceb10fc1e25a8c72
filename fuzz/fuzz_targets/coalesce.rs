//! Fuzz target `coalesce`: see `nicsim_testkit::fuzz::coalesce` for the input and the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nicsim_testkit::fuzz::coalesce(data));
