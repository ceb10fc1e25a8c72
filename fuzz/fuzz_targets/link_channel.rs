//! Fuzz target `link_channel`: see `nicsim_testkit::fuzz::link_channel` for the input and the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nicsim_testkit::fuzz::link_channel(data));
