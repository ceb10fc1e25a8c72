//! Fuzz target `coalesce`: see `nicsim_core::fuzz::coalesce` for the input and the property.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| nicsim_core::fuzz::coalesce(data));
