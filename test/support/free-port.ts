export { freePort } from '../../tools/ports/free-port';
