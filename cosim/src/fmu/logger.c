/* The logger lockstep hands to FMUs. FMI 2.0 declares it variadic, with
 * printf-style arguments after the message; Rust cannot define a variadic
 * function, so this C shim formats the message and passes the text on. */
#include <stdarg.h>
#include <stdio.h>

void lockstep_cosim_fmu_log(void *env, int status, const char *category,
                            const char *text);

void lockstep_cosim_fmi2_logger(void *env, const char *instance, int status,
                                const char *category, const char *message,
                                ...) {
  char text[2048];
  (void)instance;
  if (!message) {
    text[0] = '\0';
  } else {
    va_list ap;
    va_start(ap, message);
    vsnprintf(text, sizeof text, message, ap);
    va_end(ap);
  }
  lockstep_cosim_fmu_log(env, status, category, text);
}
