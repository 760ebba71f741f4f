/** `npm run conformance:image`: the svc-conformance image from the packed bundle (see buildConformanceImage). */
import { buildConformanceImage } from './build-image.js';

console.log(`built ${await buildConformanceImage()}`);
