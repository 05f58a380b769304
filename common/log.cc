#include "xrdma_common/log.h"

#include "xrdma_common/config.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace xrdma {

static LogLevel parse_level()
{
    const char *v = config_get("XRDMA_LOG_LEVEL");
    static const char *names[] = {"error", "warn", "info", "debug"};
    for (int i = 0; i < 4; ++i)
        if (strcasecmp(v, names[i]) == 0) return static_cast<LogLevel>(i);
    fprintf(stderr, "xrdma: XRDMA_LOG_LEVEL=%s is not one of error, warn, info, debug; using warn\n", v);
    return LogLevel::warn;
}

LogLevel log_level()
{
    static const LogLevel level = parse_level();
    return level;
}

void log_message(LogLevel level, const char *file, int line, const char *fmt, ...)
{
    static const char *tags[] = {"ERROR", "WARN", "INFO", "DEBUG"};
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    fprintf(stderr, "[xrdma %d %s %s:%d] %s\n", (int)getpid(), tags[static_cast<int>(level)],
            base ? base + 1 : file, line, msg);
}

}  // namespace xrdma
