import http from 'node:http';

const port = Number(process.env.PORT ?? 8090);
http.createServer((_req, res) => res.end('ok')).listen(port);
