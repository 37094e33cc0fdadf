// libpq, PostgreSQL's C client library (Debian: libpq-dev, whose headers live in
// /usr/include/postgresql, found through pkg-config).
#include <libpq-fe.h>
