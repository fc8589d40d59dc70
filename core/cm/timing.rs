// SPDX-License-Identifier: GPL-2.0

//! The CM's clocks: IBA time values and the timeouts derived from them.
//!
//! Pure logic with no kernel dependency: built into the module and into the
//! host unit tests (`tests/host`). The IBTA expresses every time of the CM
//! (response timeouts, packet life time, ACK delay, MRA service timeout) as a
//! 5-bit exponent `n` meaning 4.096 us * 2^n. The kernel's CM rounds them to
//! whole milliseconds with `cm_convert_to_ms()`; this file does the same, so
//! retries and timewait last as long as with the C module.

/// The service timeout an MRA announces (`CM_MRA_SETTING`): 4.096 us * 2^24,
/// about 68.7 s, for a consumer that has not answered yet.
pub(crate) const MRA_SETTING: u8 = 24;

/// The exact duration of the IBA time value `n`, in nanoseconds.
pub(crate) fn iba_time_ns(n: u8) -> u64 {
    4096u64 << n.min(31)
}

/// Milliseconds the CM waits for the IBA time value `n` (`cm_convert_to_ms()`):
/// 2^(n - 8), that is 4.096 us * 2^n rounded to a power of two of ms
/// (1.048576 ms counted as 1 ms), and at least 1 ms.
pub(crate) fn convert_to_ms(n: u8) -> u32 {
    // The C shifts an int: beyond 2^30 it would be undefined; a 5-bit field
    // stays far below, larger inputs saturate.
    1u32 << n.saturating_sub(8).min(30)
}

/// The QP's local ACK timeout for a CA ACK delay and a packet life time
/// (`cm_ack_timeout()`).
///
/// The IBTA wants 4.096 us * 2^ack_timeout = 4.096 us * 2^ack_delay +
/// 2 * 4.096 us * 2^life_time; as adding one to an exponent doubles the
/// time, the larger of `ack_delay` and `life_time + 1` is taken and rounded
/// up by one only when the other is within a factor of two.
pub(crate) fn ack_timeout(ca_ack_delay: u8, packet_life_time: u8) -> u8 {
    let delay = i32::from(ca_ack_delay);
    let mut t = i32::from(packet_life_time) + 1;
    if t >= delay {
        t += i32::from(delay >= t - 1);
    } else {
        t = delay + i32::from(t >= delay - 1);
    }
    // At most 31: fits.
    t.min(31) as u8
}

/// Timeout of each try of a REQ, in ms: the path's round trip plus the time
/// the passive side may take (`ib_send_cm_req()`).
pub(crate) fn req_timeout_ms(packet_life_time: u8, remote_cm_response_timeout: u8) -> u32 {
    convert_to_ms(packet_life_time)
        .saturating_mul(2)
        .saturating_add(convert_to_ms(remote_cm_response_timeout))
}

/// Timeout of each try of the passive side's messages (REP...), in ms: the
/// response time the REQ announced for its sender (`cm_req_handler()`).
pub(crate) fn rep_timeout_ms(req_local_cm_response_timeout: u8) -> u32 {
    convert_to_ms(req_local_cm_response_timeout)
}

/// The new timeout of a message the peer acknowledged with an MRA, in ms
/// (`cm_mra_handler()`): the time it asked for plus the path's.
pub(crate) fn mra_timeout_ms(service_timeout: u8, av_timeout: u8) -> u32 {
    convert_to_ms(service_timeout).saturating_add(convert_to_ms(av_timeout))
}

/// How long a connection stays in timewait, in ms (`cm_enter_timewait()`).
pub(crate) fn timewait_ms(av_timeout: u8) -> u32 {
    convert_to_ms(av_timeout)
}

/// How long `ib_destroy_cm_id()` waits for references before it complains
/// and waits again, in ms: all tries of the last message, plus a quarter.
pub(crate) fn destroy_wait_ms(max_cm_retries: u8, timeout_ms: u32) -> u64 {
    u64::from(max_cm_retries) * u64::from(timeout_ms) * 5 / 4
}
