export * from './answer-event-store.service';
