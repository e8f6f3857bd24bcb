//! The diagnostic exports at the boundary.

use super::*;

#[test]
fn diagnostics_exports() {
    // SAFETY: every pointer is NULL or valid, as each case says.
    unsafe {
        assert_eq!(mb_debug_panic(), MbStatus::Panic);
        let mut message = [0 as c_char; 8];
        let mut len = 0usize;
        assert_eq!(
            mb_last_error(message.as_mut_ptr(), message.len(), &mut len),
            SMALL
        );
        assert!(len > 8, "the message length is reported");
        assert_eq!(
            mb_last_error(null_mut(), 0, &mut len),
            SMALL,
            "NULL, 0 asks the length"
        );
        assert_eq!(mb_last_error(null_mut(), 64, &mut len), NULL);
        let mut whole = vec![0 as c_char; len + 1];
        assert_eq!(
            mb_last_error(whole.as_mut_ptr(), whole.len(), null_mut()),
            OK
        );
        assert!(
            CStr::from_ptr(whole.as_ptr())
                .to_string_lossy()
                .contains("panic")
        );
        // Like errno: a successful call leaves the last failure's message in place.
        let mut config = null_mut();
        assert_eq!(mb_config_new_demo(&mut config), OK);
        let mut after = vec![0 as c_char; 256];
        assert_eq!(mb_last_error(after.as_mut_ptr(), after.len(), &mut len), OK);
        assert!(
            CStr::from_ptr(after.as_ptr())
                .to_string_lossy()
                .contains("panic")
        );
        // A refusal names its reason; one without a message of its own, its status.
        let (nobody, main) = (c"nobody".as_ptr(), c"main".as_ptr());
        let refused = mb_config_add_deposit(config, nobody, main, null(), null(), null());
        assert_eq!(refused, MbStatus::UnknownHolder);
        assert_eq!(mb_last_error(after.as_mut_ptr(), after.len(), &mut len), OK);
        assert_eq!(
            CStr::from_ptr(after.as_ptr()).to_str(),
            Ok("no holder nobody")
        );
        mb_config_free(config);
        assert_eq!(mb_session_submit(null_mut(), null(), null_mut()), NULL);
        assert_eq!(mb_last_error(after.as_mut_ptr(), after.len(), &mut len), OK);
        assert_eq!(
            CStr::from_ptr(after.as_ptr()).to_str(),
            Ok("session is NULL")
        );
        let name = |code: i32| {
            CStr::from_ptr(mb_status_str(code))
                .to_str()
                .map(str::to_owned)
        };
        assert_eq!(name(MbStatus::Panic as i32).as_deref(), Ok("PANIC"));
        assert_eq!(name(2002).as_deref(), Ok("INSUFFICIENT_BALANCE"));
        assert_eq!(name(12345).as_deref(), Ok("UNKNOWN"));
    }
}
