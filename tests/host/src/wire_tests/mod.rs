// SPDX-License-Identifier: GPL-2.0

//! Host tests of `rxe/wire`: each header's layout, the opcode table against
//! the C driver's, packet round trips for every opcode, the ICRC against
//! independent vectors, PSN arithmetic, and seeded random-input tests (the
//! coverage-guided fuzzer of the parser is `tests/fuzz`).

// The software crc32_le, as `super::crc` for the tests here.
use crate::crc;

mod c_capture;
mod c_opcode_table;
mod fuzz;
mod headers;
mod icrc;
mod opcode_table;
mod packet;
mod psn;
pub(crate) mod rng;
